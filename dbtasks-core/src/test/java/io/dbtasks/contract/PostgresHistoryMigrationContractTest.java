package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresHistoryMigrationContractTest extends HistoryMigrationContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
