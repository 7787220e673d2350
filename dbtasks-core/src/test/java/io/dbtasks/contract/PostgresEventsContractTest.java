package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresEventsContractTest extends EventsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
