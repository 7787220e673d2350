package io.dbtasks.spring.rescue;

import io.dbtasks.testing.TestDatabase;

class H2SlotRescueTest extends SlotRescueContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
