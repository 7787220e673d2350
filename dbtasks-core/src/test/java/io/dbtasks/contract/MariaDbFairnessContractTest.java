package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbFairnessContractTest extends FairnessContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
