package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2ClaimableWorkContractTest extends ClaimableWorkContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
