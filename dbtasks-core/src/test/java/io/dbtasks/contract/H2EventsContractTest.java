package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2EventsContractTest extends EventsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
