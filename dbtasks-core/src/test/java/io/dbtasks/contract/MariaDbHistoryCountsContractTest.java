package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbHistoryCountsContractTest extends HistoryCountsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
