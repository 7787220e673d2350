package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2BatchContractTest extends BatchContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
