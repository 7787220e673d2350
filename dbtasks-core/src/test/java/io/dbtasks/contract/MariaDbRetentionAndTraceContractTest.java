package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbRetentionAndTraceContractTest extends RetentionAndTraceContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
