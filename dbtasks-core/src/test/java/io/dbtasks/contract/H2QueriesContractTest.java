package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2QueriesContractTest extends QueriesContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
