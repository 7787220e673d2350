package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresQueueControlContractTest extends QueueControlContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
