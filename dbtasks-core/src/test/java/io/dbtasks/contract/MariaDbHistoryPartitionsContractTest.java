package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbHistoryPartitionsContractTest extends HistoryPartitionsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
