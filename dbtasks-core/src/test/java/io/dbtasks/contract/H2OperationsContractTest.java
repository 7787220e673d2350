package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2OperationsContractTest extends OperationsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
