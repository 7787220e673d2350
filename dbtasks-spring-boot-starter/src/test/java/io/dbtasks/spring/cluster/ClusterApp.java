package io.dbtasks.spring.cluster;

import io.dbtasks.TaskContext;
import io.dbtasks.spring.RunOnce;
import io.dbtasks.spring.TaskListener;
import io.dbtasks.spring.TaskTemplate;
import io.dbtasks.spring.autoconfigure.RunOnceInterceptor;
import io.micrometer.tracing.Tracer;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.Id;
import jakarta.persistence.PersistenceContext;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.persistence.autoconfigure.EntityScan;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The application three contexts of {@link ClusterContract} run, sharing one database. */
@SpringBootApplication
@EnableScheduling
@EntityScan(basePackageClasses = ClusterApp.class)
public class ClusterApp {
    /** Runs of the ticker by second slot (epoch second), across every context of the JVM. */
    static final Map<Long, AtomicInteger> TICKS = new ConcurrentHashMap<>();
    /** Trace ids seen by the handler of {@code traced}, by task id. */
    static final Map<Long, String> HANDLER_TRACES = new ConcurrentHashMap<>();
    /** Orders whose task ran. */
    static final List<Long> SHIPPED = new CopyOnWriteArrayList<>();

    /** An order row written through JPA. */
    @Entity
    @Table(name = "cluster_order")
    public static class OrderRow {
        @Id
        Long id;

        String item;

        protected OrderRow() {}

        OrderRow(Long id, String item) {
            this.id = id;
            this.item = item;
        }
    }

    public record Ship(long orderId) {}

    /** Order service: writes the order and enqueues its task in one transaction. */
    @Service
    public static class Orders {
        private final TaskTemplate tasks;
        private final org.springframework.jdbc.core.JdbcTemplate jdbc;

        @PersistenceContext
        EntityManager em;

        public Orders(TaskTemplate tasks, org.springframework.jdbc.core.JdbcTemplate jdbc) {
            this.tasks = tasks;
            this.jdbc = jdbc;
        }

        /** JPA write and enqueue; throws after both if {@code fail}, so both roll back. */
        @Transactional
        public long placeJpa(long id, boolean fail) {
            em.persist(new OrderRow(id, "jpa"));
            em.flush();
            long taskId = tasks.enqueue("order.ship", new Ship(id)).task().id();
            if (fail) {
                throw new IllegalStateException("payment declined for order " + id);
            }
            return taskId;
        }

        /** JDBC write and enqueue in the same (JPA-managed) transaction. */
        @Transactional
        public long placeJdbc(long id, boolean fail) {
            jdbc.update("INSERT INTO cluster_order (id, item) VALUES (?, ?)", id, "jdbc");
            long taskId = tasks.enqueue("order.ship", new Ship(id)).task().id();
            if (fail) {
                throw new IllegalStateException("payment declined for order " + id);
            }
            return taskId;
        }

        @TaskListener("order.ship")
        void ship(Ship ship) {
            SHIPPED.add(ship.orderId());
        }

        @TaskListener("flaky")
        void flaky(int n, TaskContext ctx) {
            if (n % 10 == 0) {
                throw new io.dbtasks.NonRetryableException("task " + n + " is refused");
            }
            if (n % 10 == 1 && ctx.attempt() == 1) {
                throw new IllegalStateException("task " + n + " fails its first attempt");
            }
        }
    }

    /** The ticker: fired every second on every context, run once per second slot across them. */
    public static class Ticker {
        @Scheduled(fixedRate = 1000)
        @RunOnce(key = "tick", lease = "10s")
        public void tick() {
            String key = RunOnceInterceptor.currentKey().orElseThrow();
            long slot = Instant.parse(key.substring("tick:".length())).getEpochSecond();
            TICKS.computeIfAbsent(slot, k -> new AtomicInteger()).incrementAndGet();
        }
    }

    @Bean
    @ConditionalOnBooleanProperty("cluster.ticker")
    Ticker ticker() {
        return new Ticker();
    }

    /** An HTTP endpoint that enqueues, for the trace test. */
    @RestController
    public static class Api {
        private final TaskTemplate tasks;
        private final org.springframework.beans.factory.ObjectProvider<Tracer> tracer;

        public Api(TaskTemplate tasks, org.springframework.beans.factory.ObjectProvider<Tracer> tracer) {
            this.tasks = tasks;
            this.tracer = tracer;
        }

        @PostMapping("/traced")
        public Map<String, Object> traced(@RequestParam String name) {
            long id = tasks.enqueue("traced", name).task().id();
            Tracer t = tracer.getIfAvailable();
            String traceId = t != null && t.currentSpan() != null
                    ? t.currentSpan().context().traceId()
                    : "";
            return Map.of("taskId", id, "traceId", traceId);
        }
    }

    /** The traced task's handler records the trace id it runs in. */
    @Service
    public static class TracedHandler {
        private final org.springframework.beans.factory.ObjectProvider<Tracer> tracer;

        public TracedHandler(org.springframework.beans.factory.ObjectProvider<Tracer> tracer) {
            this.tracer = tracer;
        }

        @TaskListener("traced")
        void run(String name, TaskContext ctx) {
            Tracer t = tracer.getIfAvailable();
            HANDLER_TRACES.put(
                    ctx.taskId(),
                    t != null && t.currentSpan() != null
                            ? t.currentSpan().context().traceId()
                            : "none");
        }
    }
}
