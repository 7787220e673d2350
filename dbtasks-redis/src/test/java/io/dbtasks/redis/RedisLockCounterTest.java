package io.dbtasks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.cluster.LockCounter;
import io.dbtasks.testing.SecondProcess;
import io.dbtasks.testing.TestDatabase;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock guarantee on Redis: 8 threads in each of 2 processes increment one counter row under one
 * Redis lock, each write fenced by the grant's Redis token. The counter lives in PostgreSQL (H2
 * over TCP when PostgreSQL is not required). Runs {@code dbtasks.toolkit.lock-seconds} seconds
 * (default 20) and logs a {@code LOCK REDIS} line.
 */
class RedisLockCounterTest {
    private static final Logger log = LoggerFactory.getLogger(RedisLockCounterTest.class);
    static final int THREADS = 8;
    static final long LOCK_SECONDS = Long.getLong("dbtasks.toolkit.lock-seconds", 20);

    @Test
    void sixteenThreadsInTwoProcessesCountUnderOneFencedRedisLock() throws Exception {
        TestRedis.assumeRequired();
        TestDatabase db = TestDatabase.POSTGRESQL.required() ? TestDatabase.POSTGRESQL : TestDatabase.H2;
        DataSource ds = db.dataSource();
        LockCounter.createTables(ds);
        String prefix = TestRedis.freshPrefix();
        Map<String, Long> mine;
        Map<String, Long> theirs;
        try (SecondProcess other = SecondProcess.start(
                        RedisCounterWorkerMain.class,
                        TestRedis.url(),
                        prefix,
                        db.crossProcessUrl(),
                        "proc-2",
                        String.valueOf(LOCK_SECONDS));
                RedisLeaseLocks locks = new RedisLeaseLocks(TestRedis.connection(), prefix, "proc-1")) {
            other.go(Duration.ofSeconds(60));
            mine = LockCounter.run(locks, ds, "proc-1", THREADS, Duration.ofSeconds(LOCK_SECONDS));
            theirs = other.figures(Duration.ofSeconds(60));
        }
        Map<String, Long> total = SecondProcess.sum(mine, theirs);
        Map<String, Long> check = LockCounter.check(ds);
        log.info(
                "LOCK REDIS: (counter row on {}) processes=2 threads={} seconds={} {} {} increments per process:"
                        + " proc-1={} proc-2={}",
                db,
                2 * THREADS,
                LOCK_SECONDS,
                SecondProcess.format(total),
                SecondProcess.format(check),
                mine.get("increments"),
                theirs.get("increments"));

        assertThat(check.get("counter")).as("counter = acknowledged increments").isEqualTo(total.get("increments"));
        assertThat(check.get("history")).isEqualTo(total.get("increments"));
        assertThat(check.get("chainBreaks"))
                .as("accepted tokens strictly increase")
                .isZero();
        assertThat(total.get("acquisitions")).isEqualTo(total.get("increments") + total.get("rejected"));
        assertThat(mine.get("increments")).isPositive();
        assertThat(theirs.get("increments")).isPositive();
    }
}
