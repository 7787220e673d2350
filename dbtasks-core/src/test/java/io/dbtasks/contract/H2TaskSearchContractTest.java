package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2TaskSearchContractTest extends TaskSearchContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
