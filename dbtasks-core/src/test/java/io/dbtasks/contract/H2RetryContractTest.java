package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2RetryContractTest extends RetryContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
