package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbConcurrencyLimitContractTest extends ConcurrencyLimitContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
