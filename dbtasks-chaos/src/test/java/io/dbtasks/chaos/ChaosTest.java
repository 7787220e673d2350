package io.dbtasks.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.chaos.ChaosRun.Fault;
import io.dbtasks.testing.OwnPostgres;
import io.dbtasks.testing.PgBouncer;
import io.dbtasks.testing.TestDatabase;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The chaos suite at the size the build gives it ({@code -Dchaos.tasks}, {@code -Dchaos.workers},
 * {@code -Dchaos.faults} per kind; the build's default is a CI size, {@code run-chaos.sh} passes the
 * full one). Worker processes are killed, paused past their lease, cut off by a TCP proxy, their
 * connections terminated by the database, and (on the run's own PostgreSQL) the database crashes
 * and restarts; then the checker must find no task lost, none unexpected, every transactional
 * effect exactly once, one SUCCEEDED attempt per SUCCEEDED task and no token repeated.
 */
class ChaosTest {
    private static final int TASKS = Integer.getInteger("chaos.tasks", 1500);
    private static final int WORKERS = Integer.getInteger("chaos.workers", 3);
    private static final int FAULTS = Integer.getInteger("chaos.faults", 2);

    /** PostgreSQL: the run's own server (never the shared one), so that it may crash and restart. */
    @Test
    void postgresqlOwnServerWithEveryFaultIncludingRestarts() throws Exception {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "postgresql is not in dbtasks.test.databases");
        try (OwnPostgres pg = OwnPostgres.start(List.of("max_connections=200"))) {
            pg.createDatabase("chaos");
            Map<String, Long> r = new ChaosRun(
                            "postgresql", pg.url("chaos"), pg, TASKS, WORKERS, FAULTS, Fault.ONE_SERVER)
                    .run(outages());
            assertClean(r, Fault.ONE_SERVER);
            report("postgresql (own server)", r);
        }
    }

    /**
     * The engine behind PgBouncer (its own, from Debian's {@code pgbouncer}) in front of the run's
     * own PostgreSQL, in transaction and in session mode, under every fault; the restart crashes the
     * PostgreSQL behind PgBouncer. Skipped with the reason where pgbouncer is not installed.
     */
    @ParameterizedTest
    @ValueSource(strings = {"transaction", "session"})
    void postgresqlBehindPgBouncer(String poolMode) throws Exception {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "postgresql is not in dbtasks.test.databases");
        if (PgBouncer.binary().isEmpty()) {
            String reason =
                    "pgbouncer is not installed (Debian package pgbouncer): the PgBouncer chaos runs are skipped";
            System.out.println("chaos: " + reason);
            Assumptions.abort(reason);
        }
        try (OwnPostgres pg = OwnPostgres.start(List.of("max_connections=200"));
                PgBouncer bouncer = startBouncer(pg, poolMode)) {
            boolean transaction = poolMode.equals("transaction");
            String url = bouncer.jdbcUrl() + (transaction ? "&prepareThreshold=0" : "");
            Map<String, Long> r = new ChaosRun(
                            "pgbouncer-" + poolMode,
                            url,
                            pg,
                            Math.min(TASKS, 1000),
                            WORKERS,
                            Math.min(FAULTS, 1),
                            Fault.ONE_SERVER)
                    .transactionPooling(transaction)
                    .run(List.of());
            assertClean(r, Fault.ONE_SERVER, Math.min(TASKS, 1000), Math.min(FAULTS, 1));
            report("postgresql behind pgbouncer (" + poolMode + " mode)", r);
        }
    }

    /**
     * PgBouncer in transaction mode on 127.0.0.2 on the same port number as the run's own
     * PostgreSQL on 127.0.0.1 (a sidecar's 5432 in front of 5432), the plain JDBC URL, transaction
     * pooling not declared: the engines (Flyway's first migration included) must find the pooler
     * themselves. Each worker's TCP proxy serves that port too (127.0.0.3, ...), so every URL carries
     * the server's port number. Skipped with the reason where pgbouncer is missing or 127.0.0.2
     * cannot be bound.
     */
    @Test
    void postgresqlBehindPgBouncerOnTheSamePortUndeclared() throws Exception {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "postgresql is not in dbtasks.test.databases");
        if (PgBouncer.binary().isEmpty()) {
            skip("pgbouncer is not installed (Debian package pgbouncer): the same-port PgBouncer chaos run is"
                    + " skipped");
        }
        for (int i = 2; i < 3 + WORKERS; i++) {
            String address = "127.0.0." + i;
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getByName(address), 0));
            } catch (IOException e) {
                skip(address + " cannot be bound (" + e.getMessage() + "): the same-port PgBouncer chaos run is"
                        + " skipped");
            }
        }
        int tasks = Math.min(TASKS, 1000);
        int faults = Math.min(FAULTS, 1);
        try (OwnPostgres pg = OwnPostgres.start(List.of("max_connections=200"))) {
            pg.createDatabase("chaos");
            try (PgBouncer bouncer =
                    PgBouncer.start(pg.url("chaos"), "transaction", 20, "127.0.0.2", pg.port(), List.of())) {
                Map<String, Long> r = new ChaosRun(
                                "pgbouncer-same-port", bouncer.jdbcUrl(), pg, tasks, WORKERS, faults, Fault.ONE_SERVER)
                        .transactionPooling(null)
                        .proxiesOnTheSamePort("127.0.0")
                        .run(List.of());
                assertClean(r, Fault.ONE_SERVER, tasks, faults);
                report("postgresql behind pgbouncer on the same port (transaction mode, undeclared)", r);
            }
        }
    }

    private static void skip(String reason) {
        System.out.println("chaos: " + reason);
        Assumptions.abort(reason);
    }

    private static PgBouncer startBouncer(OwnPostgres pg, String poolMode) throws Exception {
        pg.createDatabase("chaos");
        return PgBouncer.start(pg.url("chaos"), poolMode, poolMode.equals("session") ? 80 : 20);
    }

    /**
     * A failover: a private primary with a synchronous standby from the machine's own PostgreSQL
     * binaries, workers on the multi-host URL ({@code targetServerType=primary}); mid-run the
     * primary's postmaster is killed with {@code SIGKILL} and the standby promoted. Skipped with
     * the reason where the binaries (Debian's postgresql) are missing.
     */
    @Test
    void failoverToASynchronousStandby() throws Exception {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "postgresql is not in dbtasks.test.databases");
        var bin = StandbyPair.binaries();
        if (bin.isEmpty()) {
            String reason = "no PostgreSQL binaries under /usr/lib/postgresql/*/bin (Debian package postgresql):"
                    + " the failover run is skipped";
            System.out.println("chaos: " + reason);
            Assumptions.abort(reason);
        }
        List<Fault> kinds = List.of(Fault.FAILOVER);
        int tasks = Integer.getInteger("chaos.failover.tasks", 1500);
        try (StandbyPair pair = StandbyPair.start(bin.get(), "chaos")) {
            Map<String, Long> r = new ChaosRun("failover", pair.multiHostUrl("chaos"), null, tasks, WORKERS, 1, kinds)
                    .standbyPair(pair)
                    .run(List.of());
            assertClean(r, kinds, tasks, 1);
            assertThat(r.get("failoverRecoveryMs"))
                    .as("a task completed after the promotion: %s", r)
                    .isNotNegative();
            report("postgresql failover to a synchronous standby (" + bin.get() + ")", r);
        }
    }

    /** PostgreSQL given by DBTASKS_TEST_POSTGRES_URL (CI's server): every fault but the restart. */
    @Test
    void externalPostgresqlWithoutRestarts() throws Exception {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "postgresql is not in dbtasks.test.databases");
        Assumptions.assumeTrue(
                TestDatabase.POSTGRESQL.external(),
                "DBTASKS_TEST_POSTGRES_URL is not set: the own-server run above covers PostgreSQL");
        List<Fault> kinds = List.of(Fault.KILL9, Fault.STOP, Fault.TERMINATE, Fault.PARTITION);
        Map<String, Long> r = new ChaosRun(
                        "postgresql-external",
                        TestDatabase.POSTGRESQL.url(),
                        null,
                        Math.min(TASKS, 1000),
                        WORKERS,
                        Math.min(FAULTS, 2),
                        kinds)
                .run(List.of());
        assertClean(r, kinds, Math.min(TASKS, 1000), Math.min(FAULTS, 2));
        report("postgresql (external)", r);
    }

    /** MariaDB: every fault but the restart (the test never restarts a server it did not start). */
    @Test
    void mariadbWithEveryFaultButRestarts() throws Exception {
        Assumptions.assumeTrue(TestDatabase.MARIADB.required(), "mariadb is not in dbtasks.test.databases");
        List<Fault> kinds = List.of(Fault.KILL9, Fault.STOP, Fault.TERMINATE, Fault.PARTITION);
        Map<String, Long> r =
                new ChaosRun("mariadb", TestDatabase.MARIADB.url(), null, TASKS, WORKERS, FAULTS, kinds).run(List.of());
        assertClean(r, kinds);
        report("mariadb", r);
    }

    static void assertClean(Map<String, Long> r, List<Fault> kinds) {
        assertClean(r, kinds, TASKS, FAULTS);
    }

    static void assertClean(Map<String, Long> r, List<Fault> kinds, int tasks, int faults) {
        assertThat(r.get("acknowledged")).as("acknowledged").isGreaterThanOrEqualTo(tasks);
        assertThat(r.get("lost")).as("lost tasks: %s", r).isZero();
        assertThat(r.get("unexpected")).as("unexpected tasks: %s", r).isZero();
        assertThat(r.get("txDuplicates"))
                .as("duplicate transactional effects: %s", r)
                .isZero();
        assertThat(r.get("txMissing"))
                .as("missing transactional effects: %s", r)
                .isZero();
        assertThat(r.get("txOrphans"))
                .as("transactional effects of unfinished tasks: %s", r)
                .isZero();
        assertThat(r.get("txTokenMismatch"))
                .as("effects under a token not the SUCCEEDED attempt's: %s", r)
                .isZero();
        assertThat(r.get("badSucceededAttempts"))
                .as("SUCCEEDED tasks without exactly one SUCCEEDED attempt: %s", r)
                .isZero();
        assertThat(r.get("repeatedTokens")).as("repeated fencing tokens: %s", r).isZero();
        assertThat(kinds.contains(Fault.STOP) ? r.get("rescues") : 1L)
                .as("faults struck tasks in flight (rescues): %s", r)
                .isPositive();
        for (Fault f : kinds) {
            assertThat(r.get("faults" + f)).as("faults of kind %s", f).isEqualTo(faults);
        }
    }

    private static List<Integer> outages() {
        String s = System.getProperty("chaos.outages", "");
        return s.isBlank()
                ? List.of()
                : Arrays.stream(s.split(","))
                        .map(String::trim)
                        .map(Integer::valueOf)
                        .toList();
    }

    /** Appends the figures to {@code -Dchaos.report} (a file), if given. */
    static void report(String label, Map<String, Long> r) throws Exception {
        String file = System.getProperty("chaos.report", "");
        if (!file.isBlank()) {
            Files.writeString(
                    Path.of(file),
                    label + " " + r + System.lineSeparator(),
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }
    }
}
