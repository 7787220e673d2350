package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2TaskOptionsContractTest extends TaskOptionsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
