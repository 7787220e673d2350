package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresStoredTextContractTest extends StoredTextContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
