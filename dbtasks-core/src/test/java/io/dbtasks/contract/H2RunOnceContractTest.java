package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2RunOnceContractTest extends RunOnceContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
