package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbClaimAndLeaseContractTest extends ClaimAndLeaseContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
