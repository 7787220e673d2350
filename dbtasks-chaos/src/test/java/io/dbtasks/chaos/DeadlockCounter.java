package io.dbtasks.chaos;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;

/**
 * The database's own deadlock counter, read every 250 ms on a connection of its own and summed over
 * the counter's resets: PostgreSQL's {@code pg_stat_database.deadlocks} of the run's database (reset
 * to zero when the server recovers from a crash), MariaDB's global {@code Innodb_deadlocks} (the
 * run's own server, so no other client adds to it). Deadlocks that PostgreSQL had not yet flushed to
 * its statistics when it crashed are not counted (at most about a second's worth per crash); the
 * server log counts those too.
 */
final class DeadlockCounter implements AutoCloseable {
    private final String url;
    private final boolean postgres;
    private final String label;
    private final Thread sampler;
    private volatile boolean closed;
    private Connection connection;
    private long last = -1;
    private long total;
    private boolean available = true;

    /**
     * @param url a direct JDBC URL of the run's database (no proxy, no pooler)
     * @param label for the log lines
     */
    DeadlockCounter(String url, String label) {
        this.url = url;
        this.postgres = url.startsWith("jdbc:postgresql:");
        this.label = label;
        sample();
        this.sampler = new Thread(
                () -> {
                    while (!closed) {
                        sample();
                        try {
                            Thread.sleep(250);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                },
                "deadlock-counter");
        sampler.setDaemon(true);
        sampler.start();
    }

    /**
     * Reads the counter now (if the database answers) and adds what it grew since the last read.
     *
     * @return deadlocks counted since this counter was created
     */
    synchronized long sample() {
        if (!available) {
            return total;
        }
        try {
            if (connection == null || connection.isClosed()) {
                connection = DriverManager.getConnection(url);
            }
            long now;
            try (Statement s = connection.createStatement();
                    ResultSet rs = s.executeQuery(
                            postgres
                                    ? "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
                                    : "SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'")) {
                if (!rs.next()) {
                    available = false;
                    System.out.println("chaos[" + label + "] the database has no deadlock counter");
                    return total;
                }
                now = rs.getLong(postgres ? 1 : 2);
            }
            if (last >= 0) {
                long grown = now >= last ? now - last : now; // smaller: reset by a crash recovery
                if (grown > 0) {
                    System.out.println("chaos[" + label + "] " + Instant.now() + " deadlocks +" + grown);
                }
                total += grown;
            }
            last = now;
        } catch (SQLException e) {
            closeConnection(); // down, restarting or failing over: read again later
        }
        return total;
    }

    /** @return whether the database has a counter ({@code false}: {@link #sample()} stays 0) */
    synchronized boolean available() {
        return available;
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        sampler.interrupt();
        sampler.join(5_000);
        synchronized (this) {
            closeConnection();
        }
    }

    private void closeConnection() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // gone already
            }
            connection = null;
        }
    }
}
