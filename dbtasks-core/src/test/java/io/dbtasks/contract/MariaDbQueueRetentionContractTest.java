package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbQueueRetentionContractTest extends QueueRetentionContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
