package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbRateLimitContractTest extends RateLimitContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
