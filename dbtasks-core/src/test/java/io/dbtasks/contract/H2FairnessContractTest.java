package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2FairnessContractTest extends FairnessContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
