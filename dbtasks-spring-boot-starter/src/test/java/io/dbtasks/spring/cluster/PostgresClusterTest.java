package io.dbtasks.spring.cluster;

import io.dbtasks.testing.TestDatabase;

class PostgresClusterTest extends ClusterContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
