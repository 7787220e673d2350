package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbJobsContractTest extends JobsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
