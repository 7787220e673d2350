package io.dbtasks.contract;

import io.dbtasks.DbTasks;
import io.dbtasks.LeaseLocks;
import io.dbtasks.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/** The lease-lock contract on {@code dbtasks_lock}; one engine without workers per process. */
abstract class JdbcLeaseLockContract extends LeaseLockContract {
    private final List<DbTasks> engines = new ArrayList<>();

    protected abstract TestDatabase database();

    @BeforeEach
    void prepareDatabase() {
        Assumptions.assumeTrue(database().required(), database() + " is not in dbtasks.test.databases");
        DbTasks.builder(database().dataSource()).workers(false).build().close(); // migrate
        database().clear();
    }

    @AfterEach
    void stopEngines() {
        engines.forEach(e -> e.stop(Duration.ofSeconds(1)));
    }

    @Override
    protected LeaseLocks locksOf(String process) {
        DbTasks e = DbTasks.builder(database().dataSource())
                .workers(false)
                .migrate(false)
                .workerId(process)
                .build();
        engines.add(e);
        return e.locks();
    }
}
