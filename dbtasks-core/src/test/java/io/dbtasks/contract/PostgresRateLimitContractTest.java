package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresRateLimitContractTest extends RateLimitContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
