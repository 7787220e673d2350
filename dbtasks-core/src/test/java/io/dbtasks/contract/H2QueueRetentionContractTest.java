package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2QueueRetentionContractTest extends QueueRetentionContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
