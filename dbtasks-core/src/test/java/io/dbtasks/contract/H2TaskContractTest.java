package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2TaskContractTest extends TaskContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
