package io.dbtasks.internal.completion;

import io.dbtasks.testing.TestDatabase;

class PostgresLeaseFencingContractTest extends LeaseFencingContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
