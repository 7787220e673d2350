package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2HistoryCountsContractTest extends HistoryCountsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
