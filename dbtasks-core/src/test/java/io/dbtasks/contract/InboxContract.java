package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.WorkFailedException;
import io.dbtasks.inbox.Inbox;
import io.dbtasks.inbox.InboxResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The inbox on {@code dbtasks_inbox}; run once per database by the subclasses. */
public abstract class InboxContract extends EngineHarness {
    private Inbox inbox;

    @BeforeEach
    void createEffectTable() throws SQLException {
        inbox = engine(b -> b.workers(false).migrate(false)).inbox();
        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement()) {
            try {
                s.executeUpdate("DROP TABLE inbox_effect");
            } catch (SQLException absent) {
                // first run
            }
            s.executeUpdate("CREATE TABLE inbox_effect (message_id VARCHAR(255) NOT NULL)");
        }
    }

    /** The handler's own write: one row per run, no unique constraint. */
    private static void effect(Connection tx, String messageId) throws SQLException {
        try (PreparedStatement ps = tx.prepareStatement("INSERT INTO inbox_effect (message_id) VALUES (?)")) {
            ps.setString(1, messageId);
            ps.executeUpdate();
        }
    }

    private long effects(String messageId) {
        return count("SELECT COUNT(*) FROM inbox_effect WHERE message_id = ?", messageId);
    }

    private long records(String consumer, String messageId) {
        return count("SELECT COUNT(*) FROM dbtasks_inbox WHERE consumer = ? AND message_id = ?", consumer, messageId);
    }

    @Test
    void newMessageRunsTheHandlerAndCommitsItsWritesWithTheRecord() {
        assertThat(inbox.receive("billing", "m-1", tx -> effect(tx, "m-1"))).isEqualTo(InboxResult.RECEIVED);
        assertThat(effects("m-1")).isEqualTo(1);
        assertThat(records("billing", "m-1")).isEqualTo(1);
    }

    @Test
    void duplicateIsSkippedWithoutRunningTheHandler() {
        inbox.receive("billing", "m-1", tx -> effect(tx, "m-1"));
        AtomicInteger runs = new AtomicInteger();
        assertThat(inbox.receive("billing", "m-1", tx -> runs.incrementAndGet()))
                .isEqualTo(InboxResult.DUPLICATE);
        assertThat(runs).hasValue(0);
        assertThat(effects("m-1")).isEqualTo(1);
    }

    @Test
    void theSameMessageIsNewToAnotherConsumer() {
        inbox.receive("billing", "m-1", tx -> {});
        assertThat(inbox.receive("shipping", "m-1", tx -> {})).isEqualTo(InboxResult.RECEIVED);
    }

    @Test
    void handlerFailureRollsBackItsWritesAndTheRecordSoARedeliveryRuns() {
        assertThatThrownBy(() -> inbox.receive("billing", "m-1", tx -> {
                    effect(tx, "m-1");
                    throw new IllegalStateException("downstream busy");
                }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("downstream busy");
        assertThat(effects("m-1")).isZero();
        assertThat(records("billing", "m-1")).isZero();

        assertThatThrownBy(() -> inbox.receive("billing", "m-1", tx -> {
                    effect(tx, "m-1");
                    throw new java.io.IOException("checked");
                }))
                .isInstanceOf(WorkFailedException.class)
                .hasCauseInstanceOf(java.io.IOException.class);
        assertThat(effects("m-1")).isZero();

        assertThat(inbox.receive("billing", "m-1", tx -> effect(tx, "m-1"))).isEqualTo(InboxResult.RECEIVED);
        assertThat(effects("m-1")).isEqualTo(1);
    }

    @Test
    void inTheCallersTransactionTheRecordCommitsAndRollsBackWithIt() throws SQLException {
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            assertThat(inbox.receive(c, "billing", "m-1", tx -> {
                        assertThat(tx).isSameAs(c);
                        effect(tx, "m-1");
                    }))
                    .isEqualTo(InboxResult.RECEIVED);
            assertThat(inbox.receive(c, "billing", "m-1", tx -> effect(tx, "m-1")))
                    .as("a duplicate inside the same transaction")
                    .isEqualTo(InboxResult.DUPLICATE);
            c.rollback();
            assertThat(records("billing", "m-1")).isZero();
            assertThat(effects("m-1")).isZero();

            assertThat(inbox.receive(c, "billing", "m-1", tx -> effect(tx, "m-1")))
                    .isEqualTo(InboxResult.RECEIVED);
            effect(c, "caller's own write");
            c.commit();
        }
        assertThat(records("billing", "m-1")).isEqualTo(1);
        assertThat(effects("m-1")).isEqualTo(1);
        assertThat(effects("caller's own write")).isEqualTo(1);
        assertThat(inbox.receive("billing", "m-1", tx -> {})).isEqualTo(InboxResult.DUPLICATE);
    }

    @Test
    void aConnectionInAutoCommitModeIsRefused() throws SQLException {
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(true);
            assertThatThrownBy(() -> inbox.receive(c, "billing", "m-1", tx -> {}))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("setAutoCommit(false)");
        }
        assertThat(records("billing", "m-1")).isZero();
    }

    @Test
    void concurrentDuplicateWaitsForTheFirstToCommitThenIsDuplicate() throws Exception {
        CountDownLatch inHandler = latch();
        CountDownLatch finish = latch();
        CompletableFuture<InboxResult> first = CompletableFuture.supplyAsync(() -> inbox.receive("c", "m", tx -> {
            effect(tx, "m");
            inHandler.countDown();
            awaitLatch(finish);
        }));
        awaitLatch(inHandler);
        AtomicInteger secondRuns = new AtomicInteger();
        CompletableFuture<InboxResult> second =
                CompletableFuture.supplyAsync(() -> inbox.receive("c", "m", tx -> secondRuns.incrementAndGet()));
        Thread.sleep(500);
        assertThat(second).as("blocked on the key while the first is open").isNotDone();
        finish.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(InboxResult.RECEIVED);
        assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(InboxResult.DUPLICATE);
        assertThat(secondRuns).hasValue(0);
        assertThat(effects("m")).isEqualTo(1);
    }

    @Test
    void concurrentDuplicateWaitsForTheFirstToRollBackThenRuns() throws Exception {
        CountDownLatch inHandler = latch();
        CountDownLatch finish = latch();
        CompletableFuture<InboxResult> first = CompletableFuture.supplyAsync(() -> inbox.receive("c", "m", tx -> {
            effect(tx, "m");
            inHandler.countDown();
            awaitLatch(finish);
            throw new IllegalStateException("first delivery fails");
        }));
        awaitLatch(inHandler);
        CompletableFuture<InboxResult> second = CompletableFuture.supplyAsync(() -> inbox.receive("c", "m", tx -> {
            effect(tx, "m");
        }));
        Thread.sleep(500);
        assertThat(second).as("blocked on the key while the first is open").isNotDone();
        finish.countDown();
        assertThatThrownBy(() -> first.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("first delivery fails");
        assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(InboxResult.RECEIVED);
        assertThat(effects("m")).isEqualTo(1);
    }

    @Test
    void retentionDeletesOnlyOldRecords() {
        for (int i = 0; i < 5; i++) {
            inbox.receive("c", "old-" + i, tx -> {});
            inbox.receive("c", "new-" + i, tx -> {});
        }
        sql(
                "UPDATE dbtasks_inbox SET received_at = ? WHERE message_id LIKE 'old-%'",
                Instant.now().minus(Duration.ofDays(8)));
        assertThat(inbox.deleteOlderThan(Duration.ofDays(7))).isEqualTo(5);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_inbox WHERE message_id LIKE 'new-%'"))
                .isEqualTo(5);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_inbox")).isEqualTo(5);
        assertThat(inbox.receive("c", "old-0", tx -> {}))
                .as("a deleted record is new again")
                .isEqualTo(InboxResult.RECEIVED);
    }

    /**
     * Retention is a sweep and must skip a row it cannot lock at once, rather
     * than wait on a transaction that holds it (a frozen worker) and stall every later batch.
     */
    @Test
    void retentionSkipsARecordLockedByAnOpenTransactionAndDeletesTheRest() throws Exception {
        for (int i = 0; i < 5; i++) {
            inbox.receive("c", "old-" + i, tx -> {});
        }
        sql(
                "UPDATE dbtasks_inbox SET received_at = ? WHERE message_id LIKE 'old-%'",
                Instant.now().minus(Duration.ofDays(8)));
        try (Connection frozen = dataSource().getConnection()) {
            frozen.setAutoCommit(false);
            try (PreparedStatement ps = frozen.prepareStatement(
                    "SELECT message_id FROM dbtasks_inbox WHERE consumer = 'c' AND message_id = 'old-0' FOR UPDATE")) {
                ps.executeQuery().close();
            }
            CompletableFuture<Integer> deleted =
                    CompletableFuture.supplyAsync(() -> inbox.deleteOlderThan(Duration.ofDays(7)));
            try {
                assertThat(deleted.get(5, TimeUnit.SECONDS)).isEqualTo(4);
            } finally {
                frozen.rollback();
            }
            deleted.join();
        }
        assertThat(records("c", "old-0")).isEqualTo(1);
        assertThat(inbox.deleteOlderThan(Duration.ofDays(7))).isEqualTo(1);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_inbox")).isEqualTo(0);
    }

    @Test
    void idsDifferingOnlyInCaseAccentOrTrailingSpaceAreDistinct() {
        for (String id : new String[] {"msg-a", "MSG-A", "msg-á", "msg-a "}) {
            assertThat(inbox.receive("billing", id, tx -> {})).as(id).isEqualTo(InboxResult.RECEIVED);
        }
        assertThat(inbox.receive("Billing", "msg-a", tx -> {})).isEqualTo(InboxResult.RECEIVED);
        assertThat(inbox.receive("billing", "msg-a", tx -> {})).isEqualTo(InboxResult.DUPLICATE);
    }

    @Test
    void invalidArgumentsAreRejected() {
        assertThatThrownBy(() -> inbox.receive("", "m", tx -> {})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> inbox.receive("c", "m".repeat(256), tx -> {}))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> inbox.receive("c", "m", null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> inbox.deleteOlderThan(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
