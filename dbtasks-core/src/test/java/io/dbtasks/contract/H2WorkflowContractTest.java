package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2WorkflowContractTest extends WorkflowContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
