package io.dbtasks.spring.rescue;

import io.dbtasks.testing.TestDatabase;

class PostgresSlotRescueTest extends SlotRescueContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
