package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresJobsContractTest extends JobsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
