package io.dbtasks.server.dashboard;

import io.dbtasks.testing.TestDatabase;

class PostgresDashboardStoreTest extends DashboardStoreContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
