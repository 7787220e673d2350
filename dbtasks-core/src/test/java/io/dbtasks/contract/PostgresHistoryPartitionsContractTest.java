package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresHistoryPartitionsContractTest extends HistoryPartitionsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
