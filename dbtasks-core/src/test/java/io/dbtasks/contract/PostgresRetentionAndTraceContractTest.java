package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresRetentionAndTraceContractTest extends RetentionAndTraceContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
