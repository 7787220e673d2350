package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresHistoryCountsContractTest extends HistoryCountsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
