package io.dbtasks.contract;

import io.dbtasks.DbTasks;
import io.dbtasks.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/**
 * Base of the contract suite: each concrete subclass names one database, and every test runs
 * against it with empty tables. Engines built with {@link #engine} are stopped after each test.
 */
public abstract class EngineHarness {
    protected final List<DbTasks> engines = new ArrayList<>();

    protected abstract TestDatabase database();

    @BeforeEach
    void prepareDatabase() {
        Assumptions.assumeTrue(database().required(), database() + " is not in dbtasks.test.databases");
        // Migrate (idempotent) and empty the tables.
        DbTasks.builder(database().dataSource()).workers(false).build().close();
        database().clear();
    }

    @AfterEach
    void stopEngines() {
        for (DbTasks e : engines) {
            e.stop(Duration.ofSeconds(5));
        }
        engines.clear();
    }

    /** Builds (not starts) an engine with fast test timings, customised by {@code config}. */
    protected DbTasks engine(Consumer<DbTasks.Builder> config) {
        DbTasks.Builder b = DbTasks.builder(database().dataSource())
                .pollInterval(Duration.ofMillis(50))
                .rescueInterval(Duration.ofMillis(200))
                .lease(Duration.ofSeconds(5))
                .shutdownTimeout(Duration.ofSeconds(5));
        config.accept(b);
        DbTasks e = b.build();
        engines.add(e);
        return e;
    }
}
