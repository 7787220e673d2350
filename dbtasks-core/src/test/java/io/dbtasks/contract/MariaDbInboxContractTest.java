package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbInboxContractTest extends InboxContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
