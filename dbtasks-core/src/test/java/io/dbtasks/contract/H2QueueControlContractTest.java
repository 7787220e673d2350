package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2QueueControlContractTest extends QueueControlContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
