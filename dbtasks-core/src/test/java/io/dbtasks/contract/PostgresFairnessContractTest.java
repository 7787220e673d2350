package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresFairnessContractTest extends FairnessContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
