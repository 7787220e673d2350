package io.dbtasks.internal;

import io.dbtasks.testing.TestDatabase;

class H2LeaseFencingContractTest extends LeaseFencingContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
