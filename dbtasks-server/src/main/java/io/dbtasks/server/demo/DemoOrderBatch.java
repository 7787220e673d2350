package io.dbtasks.server.demo;

import io.dbtasks.DbTasks;
import io.dbtasks.batch.Batch;
import io.dbtasks.batch.BatchRequest;
import io.dbtasks.spring.DbTasksBuilderCustomizer;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The demo's chunked batch: {@value #ORDERS} sample orders in a table of the demo ({@code
 * demo_order}), synchronised in {@value #CHUNKS} chunks of {@value #ORDERS_PER_CHUNK} by the batch
 * kind {@value #KIND}. Each chunk marks its orders SYNCED in the chunk's own transaction, together
 * with the chunk's done record, so a restart resumes with the chunks not yet done and no order is
 * synchronised twice. The table, the orders and the batch (idempotency key {@value #BATCH_KEY}) are
 * created at the first start; later starts find them. Turned off with the sample jobs by {@code
 * dbtasks.server.seed-demo-jobs=false} (the chunk handler stays registered).
 */
@ConditionalOnBooleanProperty(DemoHandlers.ENABLED)
@Configuration(proxyBeanMethods = false)
public class DemoOrderBatch {
    /** The batch kind. */
    public static final String KIND = "orders.sync";
    /** The idempotency key of the demo's batch. */
    public static final String BATCH_KEY = "demo-orders-sync";

    static final int ORDERS = 1000;
    static final int CHUNKS = 10;
    static final int ORDERS_PER_CHUNK = ORDERS / CHUNKS;

    private static final Logger log = LoggerFactory.getLogger(DemoOrderBatch.class);

    /**
     * The batch parameters.
     *
     * @param ordersPerChunk how many consecutive order ids one chunk covers
     */
    public record OrderRange(int ordersPerChunk) {}

    /** @return registers the chunk handler of {@value #KIND} on the engine */
    @Bean
    DbTasksBuilderCustomizer demoOrderChunks() {
        return builder -> builder.chunkHandler(KIND, OrderRange.class, (chunk, tx, params) -> {
            // A batch created without params covers the sample orders as the demo's own batch does.
            OrderRange range = params != null ? params : new OrderRange(ORDERS_PER_CHUNK);
            long from = (long) chunk.chunk() * range.ordersPerChunk();
            try (PreparedStatement ps = tx.prepareStatement("UPDATE demo_order SET status = 'SYNCED', synced_chunk = ?"
                    + " WHERE id > ? AND id <= ? AND status = 'NEW'")) {
                ps.setInt(1, chunk.chunk());
                ps.setLong(2, from);
                ps.setLong(3, from + range.ordersPerChunk());
                int n = ps.executeUpdate();
                log.info(
                        "Batch {} chunk {}/{} synchronised {} orders",
                        chunk.batchId(),
                        chunk.chunk() + 1,
                        chunk.chunks(),
                        n);
            }
        });
    }

    /**
     * @param dbTasks the engine
     * @param dataSource the application's database, which holds the demo table
     * @return the runner that creates the sample orders and the batch
     */
    @Bean
    @ConditionalOnBooleanProperty(name = "dbtasks.server.seed-demo-jobs", matchIfMissing = true)
    ApplicationRunner demoOrderBatchRunner(DbTasks dbTasks, DataSource dataSource) {
        return (ApplicationArguments args) -> {
            try {
                createOrders(dataSource);
                Batch batch = dbTasks.batches()
                        .create(BatchRequest.builder(KIND, CHUNKS)
                                .params(new OrderRange(ORDERS_PER_CHUNK))
                                .name("Synchronise the " + ORDERS + " sample orders")
                                .idempotencyKey(BATCH_KEY)
                                .build());
                log.info(
                        "Demo batch {} ({} chunks) {}: GET /api/batches/{}",
                        batch.id(),
                        batch.chunks(),
                        batch.duplicate() ? "present" : "created",
                        batch.id());
            } catch (SQLException | RuntimeException e) {
                log.warn("Creating the demo order batch failed ({}); the server runs without it", e.getMessage());
            }
        };
    }

    /** Creates {@code demo_order} with {@value #ORDERS} NEW orders, unless it holds some already. */
    static void createOrders(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("CREATE TABLE IF NOT EXISTS demo_order (id BIGINT PRIMARY KEY, user_name VARCHAR(100)"
                        + " NOT NULL, amount DECIMAL(12, 2) NOT NULL, status VARCHAR(16) NOT NULL, synced_chunk INT)");
                try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM demo_order")) {
                    rs.next();
                    if (rs.getLong(1) > 0) {
                        return;
                    }
                }
            }
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO demo_order (id, user_name, amount, status) VALUES (?, ?, ?, 'NEW')")) {
                for (int id = 1; id <= ORDERS; id++) {
                    ps.setLong(1, id);
                    ps.setString(2, "user-" + (id % 37));
                    ps.setBigDecimal(3, BigDecimal.valueOf(id * 137L % 50_000, 2));
                    ps.addBatch();
                }
                ps.executeBatch();
                c.commit();
            } catch (SQLException e) {
                c.rollback(); // another instance inserted them first
                log.info("Sample orders not inserted ({}); another instance may have", e.getMessage());
            } finally {
                c.setAutoCommit(autoCommit);
            }
        }
    }
}
