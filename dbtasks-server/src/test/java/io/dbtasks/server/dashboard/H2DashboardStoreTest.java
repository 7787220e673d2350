package io.dbtasks.server.dashboard;

import io.dbtasks.testing.TestDatabase;

class H2DashboardStoreTest extends DashboardStoreContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
