package io.dbtasks.internal;

import io.dbtasks.testing.TestDatabase;

class PostgresLeaseFencingContractTest extends LeaseFencingContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
