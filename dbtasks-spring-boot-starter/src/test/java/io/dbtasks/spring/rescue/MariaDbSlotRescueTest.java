package io.dbtasks.spring.rescue;

import io.dbtasks.testing.TestDatabase;

class MariaDbSlotRescueTest extends SlotRescueContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
