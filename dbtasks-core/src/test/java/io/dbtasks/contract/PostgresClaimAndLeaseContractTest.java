package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresClaimAndLeaseContractTest extends ClaimAndLeaseContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
