package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2RateLimitContractTest extends RateLimitContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
