package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2BatchRetentionContractTest extends BatchRetentionContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
