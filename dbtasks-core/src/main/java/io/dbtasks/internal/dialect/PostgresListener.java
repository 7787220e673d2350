package io.dbtasks.internal.dialect;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL {@code LISTEN} on a dedicated connection, so an idle worker starts a task enqueued by
 * any instance within milliseconds instead of at its next poll. Enqueues {@code NOTIFY} the queue
 * name, delivered when their transaction commits. If the connection breaks, the listener reconnects
 * with backoff; meanwhile, and always, polling remains the fallback, so a lost notification only
 * delays a task by up to one poll interval.
 */
final class PostgresListener implements AutoCloseable, Runnable {
    static final String CHANNEL = "dbtasks_task";
    private static final Logger log = LoggerFactory.getLogger(PostgresListener.class);
    private static final int WAIT_MILLIS = 500;
    private static final long MAX_BACKOFF_MILLIS = 30_000;

    private final DataSource dataSource;
    private final Consumer<String> onQueue;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile Connection connection;

    private PostgresListener(DataSource dataSource, Consumer<String> onQueue) {
        this.dataSource = dataSource;
        this.onQueue = onQueue;
        this.thread = new Thread(this, "dbtasks-listen");
        this.thread.setDaemon(true);
    }

    static PostgresListener start(DataSource dataSource, Consumer<String> onQueue) {
        PostgresListener l = new PostgresListener(dataSource, onQueue);
        l.thread.start();
        return l;
    }

    @Override
    public void run() {
        long backoff = 100;
        while (running) {
            try (Connection c = dataSource.getConnection()) {
                connection = c;
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN " + CHANNEL);
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                backoff = 100;
                while (running) {
                    PGNotification[] notes = pg.getNotifications(WAIT_MILLIS);
                    if (notes != null) {
                        for (PGNotification n : notes) {
                            onQueue.accept(n.getParameter());
                        }
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (!running) {
                    return;
                }
                log.warn(
                        "LISTEN connection failed ({}); polling covers the gap, reconnecting in {} ms",
                        e.getMessage(),
                        backoff);
                sleep(backoff);
                backoff = Math.min(backoff * 2, MAX_BACKOFF_MILLIS);
            } finally {
                connection = null;
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(WAIT_MILLIS * 4L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
