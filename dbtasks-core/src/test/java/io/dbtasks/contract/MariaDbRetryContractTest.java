package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbRetryContractTest extends RetryContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
