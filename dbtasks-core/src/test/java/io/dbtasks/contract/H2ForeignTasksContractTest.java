package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2ForeignTasksContractTest extends ForeignTasksContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
