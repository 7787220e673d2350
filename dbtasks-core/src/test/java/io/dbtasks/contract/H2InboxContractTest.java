package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2InboxContractTest extends InboxContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
