package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbEnqueueContractTest extends EnqueueContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
