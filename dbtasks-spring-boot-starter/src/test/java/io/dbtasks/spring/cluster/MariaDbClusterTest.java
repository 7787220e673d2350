package io.dbtasks.spring.cluster;

import io.dbtasks.testing.TestDatabase;

class MariaDbClusterTest extends ClusterContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
