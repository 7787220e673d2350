package io.dbtasks.internal.enqueue;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.dialect.Dialects;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * PostgreSQL: {@link EnqueueSignals#close} against enqueues that commit while it runs. Each enqueue
 * took its queue's in-transaction signal before (so what it owes after its commit is a trailing
 * signal), the interval is a minute (so no timer would send one during the test): whatever reaches
 * the listener was sent by {@code close} or by the commit itself, and every owed signal must arrive
 * exactly once.
 */
class EnqueueSignalsCloseTest {
    private static final Duration INTERVAL = Duration.ofMinutes(1);

    /**
     * This test's queue names start with it, so notifications of other tests (the channel is shared,
     * and a pooled connection may still listen from an earlier test) are not counted.
     */
    private final String prefix = "signals-close-" + UUID.randomUUID() + "-";

    @BeforeEach
    void postgres() {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
    }

    @Test
    void anEnqueueThatCommitsAfterCloseSignalsAtOnceOnItsOwnThread() throws Exception {
        EnqueueSignals signals = signals();
        String late = prefix + "late";
        try (Listener listen = new Listener()) {
            assertThat(signals.claim(Set.of(late))).containsExactly(late); // the first: inline
            assertThat(signals.claim(Set.of(late))).as("throttled").isEmpty();
            signals.close(1_000);
            assertThat(listen.notifications(300)).as("nothing owed yet").isEmpty();
            signals.committed(Set.of(late));
            assertThat(listen.notifications(2_000)).containsExactly(Map.entry(late, 1));
            assertThat(signals.claim(Set.of(late)))
                    .as("after close every enqueue signals in its own transaction")
                    .containsExactly(late);
        }
    }

    @RepeatedTest(6)
    void commitsRacingCloseAreEachSignalledExactlyOnce(RepetitionInfo repetition) throws Exception {
        int queues = 40;
        EnqueueSignals signals = signals();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (Listener listen = new Listener()) {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < queues; i++) {
                String q = prefix + "race-" + i;
                names.add(q);
                signals.claim(Set.of(q)); // its inline signal (not sent here: only trailing ones are counted)
            }
            // Half commit before close (their trailing signals are owed to the timer, which close drops
            // and sends itself), half race with it.
            for (String q : names.subList(0, queues / 2)) {
                assertThat(signals.claim(Set.of(q))).isEmpty();
                signals.committed(Set.of(q));
            }
            CountDownLatch go = new CountDownLatch(1);
            Set<String> owing = ConcurrentHashMap.newKeySet();
            List<Future<?>> racing = new ArrayList<>();
            for (String q : names.subList(queues / 2, queues)) {
                racing.add(pool.submit(() -> {
                    go.await();
                    // Throttled while close has not begun: then the enqueue owes a trailing signal after its
                    // commit. Once close has begun, it signals inline (not sent in this test) and owes none.
                    if (signals.claim(Set.of(q)).isEmpty()) {
                        owing.add(q);
                        signals.committed(Set.of(q));
                    }
                    return null;
                }));
            }
            go.countDown();
            // Close a little later in each repetition (0, 0.1, 0.2, 0.4, 0.8, 1.6 ms), so that some runs
            // close before the racing enqueues claim, some after they commit, and some in between.
            int r = repetition.getCurrentRepetition();
            LockSupport.parkNanos(r == 1 ? 0 : 100_000L << (r - 2));
            signals.close(1_000);
            for (Future<?> f : racing) {
                f.get(10, TimeUnit.SECONDS);
            }
            Map<String, Integer> seen = listen.notifications(2_000);
            Map<String, Integer> expected = new TreeMap<>();
            names.subList(0, queues / 2).forEach(q -> expected.put(q, 1));
            owing.forEach(q -> expected.put(q, 1));
            assertThat(seen)
                    .as(
                            "every owed signal exactly once (the %d committed before close, and the %d racing"
                                    + " enqueues that were throttled before it began), none other",
                            queues / 2, owing.size())
                    .isEqualTo(expected);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aCommitThatClaimedBeforeCloseButCommitsAfterItIsNotLost() throws Exception {
        EnqueueSignals signals = signals();
        String owed = prefix + "owed";
        String early = prefix + "early";
        try (Listener listen = new Listener()) {
            signals.claim(Set.of(owed)); // inline
            signals.claim(Set.of(owed)); // throttled: owes a trailing signal once it commits
            signals.claim(Set.of(early)); // inline
            signals.claim(Set.of(early)); // throttled
            signals.committed(Set.of(early)); // owes a trailing signal a minute away: close sends it
            signals.close(1_000);
            signals.committed(Set.of(owed));
            Map<String, Integer> seen = listen.notifications(2_000);
            assertThat(seen).containsEntry(owed, 1).containsEntry(early, 1);
        }
    }

    private static EnqueueSignals signals() {
        Jdbc jdbc = new Jdbc(TestDatabase.POSTGRESQL.dataSource());
        Dialect dialect = Dialects.detect(TestDatabase.POSTGRESQL.dataSource());
        return new EnqueueSignals(jdbc, dialect, INTERVAL);
    }

    /** A connection of the test pool listening on the engine's channel; it stops listening on close. */
    private final class Listener implements AutoCloseable {
        private final Connection connection;

        Listener() throws SQLException {
            connection = TestDatabase.POSTGRESQL.dataSource().getConnection();
            try (Statement s = connection.createStatement()) {
                s.execute("LISTEN dbtasks_task");
            }
        }

        /** @return how many notifications each of this test's queues got within {@code millis} */
        Map<String, Integer> notifications(int millis) throws SQLException {
            Map<String, Integer> seen = new TreeMap<>();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            while (System.nanoTime() < deadline) {
                PGNotification[] batch = connection.unwrap(PGConnection.class).getNotifications(100);
                if (batch != null) {
                    for (PGNotification n : batch) {
                        if (n.getParameter().startsWith(prefix)) {
                            seen.merge(n.getParameter(), 1, Integer::sum);
                        }
                    }
                }
            }
            return seen;
        }

        @Override
        public void close() throws SQLException {
            try (Statement s = connection.createStatement()) {
                s.execute("UNLISTEN *"); // the pooled connection goes back without a listener
            } finally {
                connection.close();
            }
        }
    }
}
