package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresTypedKindContractTest extends TypedKindContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
