package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresForeignTasksContractTest extends ForeignTasksContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
