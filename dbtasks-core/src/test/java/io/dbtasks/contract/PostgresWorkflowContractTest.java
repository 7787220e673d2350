package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresWorkflowContractTest extends WorkflowContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
