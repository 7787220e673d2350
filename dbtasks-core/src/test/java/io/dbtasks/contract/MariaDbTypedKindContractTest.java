package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbTypedKindContractTest extends TypedKindContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
