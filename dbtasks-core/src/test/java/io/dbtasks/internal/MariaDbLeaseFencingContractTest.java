package io.dbtasks.internal;

import io.dbtasks.testing.TestDatabase;

class MariaDbLeaseFencingContractTest extends LeaseFencingContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
