package io.dbtasks.spring.cluster;

import io.dbtasks.testing.TestDatabase;

class H2ClusterTest extends ClusterContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.H2;
    }
}
