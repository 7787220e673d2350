package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbRunOnceContractTest extends RunOnceContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
