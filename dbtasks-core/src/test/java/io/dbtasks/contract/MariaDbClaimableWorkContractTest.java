package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbClaimableWorkContractTest extends ClaimableWorkContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
