package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbQueueControlContractTest extends QueueControlContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
