package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresLeaseLockContractTest extends JdbcLeaseLockContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
