package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresConcurrencyLimitContractTest extends ConcurrencyLimitContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
