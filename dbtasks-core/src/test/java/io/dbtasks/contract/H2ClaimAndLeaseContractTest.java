package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2ClaimAndLeaseContractTest extends ClaimAndLeaseContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
