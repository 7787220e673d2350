package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2TypedKindContractTest extends TypedKindContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
