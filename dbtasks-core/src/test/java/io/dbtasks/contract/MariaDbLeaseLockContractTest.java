package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbLeaseLockContractTest extends JdbcLeaseLockContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
