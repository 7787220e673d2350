package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2HistoryMigrationContractTest extends HistoryMigrationContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
