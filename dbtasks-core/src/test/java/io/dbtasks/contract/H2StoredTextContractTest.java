package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class H2StoredTextContractTest extends StoredTextContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
