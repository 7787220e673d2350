package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbStoredTextContractTest extends StoredTextContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
