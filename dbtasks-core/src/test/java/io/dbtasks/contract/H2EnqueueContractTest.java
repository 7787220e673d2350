package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2EnqueueContractTest extends EnqueueContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
