package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2TransactionalHandlerContractTest extends TransactionalHandlerContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
