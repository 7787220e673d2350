package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresInboxContractTest extends InboxContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
