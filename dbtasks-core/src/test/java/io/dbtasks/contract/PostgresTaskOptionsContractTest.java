package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresTaskOptionsContractTest extends TaskOptionsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
