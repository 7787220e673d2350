package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2ConcurrencyLimitContractTest extends ConcurrencyLimitContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
