package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2LeaseLockContractTest extends JdbcLeaseLockContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
