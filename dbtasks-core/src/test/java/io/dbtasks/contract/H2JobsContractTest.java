package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2JobsContractTest extends JobsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
