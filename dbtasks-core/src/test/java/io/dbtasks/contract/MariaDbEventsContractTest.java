package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbEventsContractTest extends EventsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
