package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2HistoryPartitionsContractTest extends HistoryPartitionsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
