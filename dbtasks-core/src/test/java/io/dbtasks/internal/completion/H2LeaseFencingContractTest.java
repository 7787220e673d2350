package io.dbtasks.internal.completion;

import io.dbtasks.testing.TestDatabase;

class H2LeaseFencingContractTest extends LeaseFencingContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
