package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbWorkflowContractTest extends WorkflowContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
