package io.dbtasks.server.dashboard;

import io.dbtasks.testing.TestDatabase;

class MariaDbDashboardStoreTest extends DashboardStoreContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
