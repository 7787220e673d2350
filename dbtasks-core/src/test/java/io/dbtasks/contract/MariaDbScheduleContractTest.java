package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbScheduleContractTest extends ScheduleContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
