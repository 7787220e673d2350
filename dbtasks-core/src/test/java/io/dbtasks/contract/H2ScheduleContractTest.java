package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2ScheduleContractTest extends ScheduleContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
