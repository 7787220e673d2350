package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2RetentionAndTraceContractTest extends RetentionAndTraceContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
