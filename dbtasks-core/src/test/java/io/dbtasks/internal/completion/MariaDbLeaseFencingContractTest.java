package io.dbtasks.internal.completion;

import io.dbtasks.testing.TestDatabase;

class MariaDbLeaseFencingContractTest extends LeaseFencingContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
