package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresQueueRetentionContractTest extends QueueRetentionContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
