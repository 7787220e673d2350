package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresClaimableWorkContractTest extends ClaimableWorkContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
