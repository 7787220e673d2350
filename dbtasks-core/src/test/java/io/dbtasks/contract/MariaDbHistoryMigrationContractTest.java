package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbHistoryMigrationContractTest extends HistoryMigrationContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
