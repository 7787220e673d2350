package io.dbtasks.cluster;

import io.dbtasks.DbTasksException;
import io.dbtasks.inbox.Inbox;
import io.dbtasks.inbox.InboxResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The inbox under redelivery: each message is delivered several times at once, as a broker with
 * at-least-once delivery would; the handler writes its effect through the inbox transaction and
 * fails at random on some messages' first try, and a failed delivery is delivered again.
 */
public final class InboxRedelivery {
    static final String CONSUMER = "inbox-cluster";
    static final double FAIL_FIRST_TRY = 0.1;

    private final Inbox inbox;
    private final ExecutorService pool;
    private final Set<String> tried = ConcurrentHashMap.newKeySet();
    private final AtomicInteger outstanding = new AtomicInteger();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    private final AtomicLong handlerFailures = new AtomicLong();
    private final AtomicLong databaseErrors = new AtomicLong();
    private final AtomicLong redeliveries = new AtomicLong();

    private InboxRedelivery(Inbox inbox, int threads) {
        this.inbox = inbox;
        this.pool = Executors.newFixedThreadPool(threads);
    }

    /** Drops and creates {@code inbox_effect}. */
    public static void createTable(javax.sql.DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            try {
                s.executeUpdate("DROP TABLE inbox_effect");
            } catch (SQLException absent) {
                // first run
            }
            s.executeUpdate("CREATE TABLE inbox_effect (message_id VARCHAR(255) NOT NULL)");
        }
    }

    /** @return deliveries, received, duplicates, handlerFailures, databaseErrors, redeliveries */
    public static Map<String, Long> run(Inbox inbox, int messages, int copies, int threads) throws Exception {
        InboxRedelivery r = new InboxRedelivery(inbox, threads);
        try {
            r.outstanding.incrementAndGet(); // held until everything is submitted
            for (int m = 0; m < messages; m++) {
                for (int c = 0; c < copies; c++) {
                    r.deliver("msg-" + m);
                }
            }
            r.finished();
            r.done.get(5, TimeUnit.MINUTES);
        } finally {
            r.pool.shutdownNow();
        }
        Map<String, Long> figures = new LinkedHashMap<>();
        figures.put("deliveries", (long) messages * copies + r.redeliveries.get());
        figures.put("received", r.received.get());
        figures.put("duplicates", r.duplicates.get());
        figures.put("handlerFailures", r.handlerFailures.get());
        figures.put("databaseErrors", r.databaseErrors.get());
        figures.put("redeliveries", r.redeliveries.get());
        return figures;
    }

    private void deliver(String messageId) {
        outstanding.incrementAndGet();
        pool.execute(() -> {
            try {
                InboxResult result = inbox.receive(CONSUMER, messageId, tx -> {
                    try (PreparedStatement ps =
                            tx.prepareStatement("INSERT INTO inbox_effect (message_id) VALUES (?)")) {
                        ps.setString(1, messageId);
                        ps.executeUpdate();
                    }
                    Thread.sleep(1);
                    if (tried.add(messageId) && ThreadLocalRandom.current().nextDouble() < FAIL_FIRST_TRY) {
                        throw new HandlerFailure(messageId);
                    }
                });
                (result == InboxResult.RECEIVED ? received : duplicates).incrementAndGet();
            } catch (HandlerFailure e) {
                handlerFailures.incrementAndGet();
                redeliver(messageId);
            } catch (DbTasksException e) {
                databaseErrors.incrementAndGet();
                redeliver(messageId);
            } finally {
                finished();
            }
        });
    }

    private void redeliver(String messageId) {
        redeliveries.incrementAndGet();
        deliver(messageId);
    }

    private void finished() {
        if (outstanding.decrementAndGet() == 0) {
            done.complete(null);
        }
    }

    /** The handler's simulated failure. */
    static final class HandlerFailure extends RuntimeException {
        HandlerFailure(String messageId) {
            super("handler failed on the first try of " + messageId);
        }
    }
}
