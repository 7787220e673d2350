package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresScheduleContractTest extends ScheduleContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
