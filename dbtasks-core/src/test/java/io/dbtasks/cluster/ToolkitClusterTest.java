package io.dbtasks.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.testing.SecondProcess;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The idempotency toolkit's guarantees under load, with a second JVM where two processes are asked
 * for: one lock across 16 threads in 2 processes, fencing every write; {@code runOnce} raced by 16
 * callers over 2 processes; the inbox under concurrent redelivery. Each logs its figures on a line
 * that starts with {@code LOCK}, {@code RUNONCE} or {@code INBOX} and the database.
 *
 * <p>The lock test runs {@code dbtasks.toolkit.lock-seconds} seconds (default 20).
 */
class ToolkitClusterTest {
    private static final Logger log = LoggerFactory.getLogger(ToolkitClusterTest.class);
    static final long LOCK_SECONDS = Long.getLong("dbtasks.toolkit.lock-seconds", 20);
    static final int THREADS = ToolkitWorkerMain.THREADS;
    static final int KEYS = 200;
    static final int MESSAGES = 1000;
    static final int COPIES = 3;

    private static DataSource prepare(TestDatabase db) {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        DataSource ds = db.dataSource();
        DbTasks.builder(ds).workers(false).build().close(); // migrate
        db.clear();
        return ds;
    }

    private static DbTasks engine(DataSource ds, String process) {
        return DbTasks.builder(ds)
                .workers(false)
                .migrate(false)
                .workerId(process)
                .build();
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void sixteenThreadsInTwoProcessesCountUnderOneFencedLock(TestDatabase db) throws Exception {
        DataSource ds = prepare(db);
        LockCounter.createTables(ds);
        Duration duration = Duration.ofSeconds(LOCK_SECONDS);
        Map<String, Long> mine;
        Map<String, Long> theirs;
        try (SecondProcess other = SecondProcess.start(
                        ToolkitWorkerMain.class, "lock", db.crossProcessUrl(), "proc-2", String.valueOf(LOCK_SECONDS));
                DbTasks tasks = engine(ds, "proc-1")) {
            other.go(Duration.ofSeconds(60));
            mine = LockCounter.run(tasks.locks(), ds, "proc-1", THREADS, duration);
            theirs = other.figures(Duration.ofSeconds(60));
        }
        Map<String, Long> total = SecondProcess.sum(mine, theirs);
        Map<String, Long> check = LockCounter.check(ds);
        log.info(
                "LOCK {}: processes=2 threads={} seconds={} {} {} increments per process: proc-1={} proc-2={}",
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

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void runOnceRacedBySixteenCallersInTwoProcessesRunsEachKeyOnce(TestDatabase db) throws Exception {
        DataSource ds = prepare(db);
        RunOnceRace.createTable(ds);
        long start = System.nanoTime();
        Map<String, Long> mine;
        Map<String, Long> theirs;
        try (SecondProcess other = SecondProcess.start(
                        ToolkitWorkerMain.class, "runonce", db.crossProcessUrl(), "proc-2", String.valueOf(KEYS));
                DbTasks tasks = engine(ds, "proc-1")) {
            RunOnceRace.warmUp(tasks.guards(), "proc-1");
            other.go(Duration.ofSeconds(60));
            mine = RunOnceRace.run(tasks.guards(), ds, THREADS, KEYS, false);
            theirs = other.figures(Duration.ofSeconds(120));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Long> total = SecondProcess.sum(mine, theirs);
        long effects = single(ds, "SELECT COUNT(*) FROM once_effect");
        long keysRun = single(ds, "SELECT COUNT(DISTINCT once_key) FROM once_effect");
        long keysRunTwice = single(
                ds, "SELECT COUNT(*) FROM (SELECT once_key FROM once_effect GROUP BY once_key HAVING COUNT(*) > 1) d");
        long succeeded =
                single(ds, "SELECT COUNT(*) FROM dbtasks_once WHERE status = 'SUCCEEDED' AND once_key LIKE 'race-%'");
        log.info(
                "RUNONCE {}: keys={} callers={} processes=2 calls={} {} effects={} keysRunTwice={} succeeded={}"
                        + " ran per process: proc-1={} proc-2={} wall={}s",
                db,
                KEYS,
                2 * THREADS,
                total.values().stream().mapToLong(Long::longValue).sum(),
                SecondProcess.format(total),
                effects,
                keysRunTwice,
                succeeded,
                mine.get("RAN"),
                theirs.get("RAN"),
                String.format("%.1f", seconds));

        assertThat(effects).as("each key's work ran exactly once").isEqualTo(KEYS);
        assertThat(keysRun).isEqualTo(KEYS);
        assertThat(keysRunTwice).isZero();
        assertThat(succeeded).isEqualTo(KEYS);
        assertThat(total.get("RAN") + total.get("TOOK_OVER")).isEqualTo(KEYS);
        assertThat(total.get("FAILED") + total.get("LEASE_LOST")).isZero();
        assertThat(total.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(2L * THREADS * KEYS);
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void inboxTakesEachMessageOnceUnderConcurrentRedelivery(TestDatabase db) throws Exception {
        DataSource ds = prepare(db);
        InboxRedelivery.createTable(ds);
        long start = System.nanoTime();
        Map<String, Long> figures;
        try (DbTasks tasks = engine(ds, "inbox")) {
            figures = InboxRedelivery.run(tasks.inbox(), MESSAGES, COPIES, 12);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long effects = single(ds, "SELECT COUNT(*) FROM inbox_effect");
        long distinct = single(ds, "SELECT COUNT(DISTINCT message_id) FROM inbox_effect");
        long records = single(ds, "SELECT COUNT(*) FROM dbtasks_inbox");
        log.info(
                "INBOX {}: messages={} copies={} {} effects={} distinctEffects={} records={} wall={}s",
                db,
                MESSAGES,
                COPIES,
                SecondProcess.format(figures),
                effects,
                distinct,
                records,
                String.format("%.1f", seconds));

        assertThat(effects).as("every message's effect exactly once").isEqualTo(MESSAGES);
        assertThat(distinct).isEqualTo(MESSAGES);
        assertThat(records).isEqualTo(MESSAGES);
        assertThat(figures.get("received")).isEqualTo(MESSAGES);
        assertThat(figures.get("duplicates")).isEqualTo((long) MESSAGES * (COPIES - 1));
        assertThat(figures.get("handlerFailures")).isPositive();
    }

    private static long single(DataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
