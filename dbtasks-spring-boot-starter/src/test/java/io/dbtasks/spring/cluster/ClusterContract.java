package io.dbtasks.spring.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.testing.TcpProxy;
import io.dbtasks.testing.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Three application contexts (web server, actuator, Prometheus registry, Brave tracing, JPA) sharing
 * one database, as three instances of a service would: {@code @RunOnce} on a one-second
 * {@code @Scheduled} method, enqueue inside rolled-back and committed {@code @Transactional}
 * methods (JPA and JDBC), Prometheus counters against the task table, one trace from an HTTP
 * request to the task's execution, and {@code /actuator/health} through a database outage (a TCP
 * proxy between the contexts and the database). Run once per database by the subclasses.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public abstract class ClusterContract {
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();
    private TcpProxy proxy;
    private Instant started;

    protected abstract TestDatabase database();

    @BeforeAll
    void startThreeInstances() throws Exception {
        Assumptions.assumeTrue(database().required(), database() + " is not in dbtasks.test.databases");
        String url;
        if (database() == TestDatabase.H2) {
            // A fresh in-memory database of the three contexts (Boot connects to H2 as "sa").
            url = "jdbc:h2:mem:cluster-" + java.util.UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
        } else {
            // Empty the tables (migrating them first) and drop the order table of an earlier run.
            DbTasks.builder(database().dataSource()).workers(false).build().close();
            database().clear();
            try (Connection c = database().dataSource().getConnection();
                    Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS cluster_order");
            }
            url = database().url();
            URI target = URI.create(url.substring("jdbc:".length()));
            proxy = new TcpProxy(target.getHost(), target.getPort());
            url = proxy.rewrite(url);
        }
        ClusterApp.TICKS.clear();
        for (int i = 0; i < 3; i++) {
            Map<String, Object> p = new HashMap<>();
            p.put("spring.datasource.url", url);
            p.put("spring.datasource.hikari.connection-timeout", "2000");
            p.put("spring.datasource.hikari.maximum-pool-size", "12");
            p.put("spring.jpa.hibernate.ddl-auto", "update");
            p.put("spring.jpa.open-in-view", "false");
            p.put("server.port", "0");
            p.put("management.endpoints.web.exposure.include", "health,prometheus,dbtasks");
            p.put("management.endpoint.health.show-details", "always");
            p.put("management.tracing.sampling.probability", "1.0");
            p.put("dbtasks.worker-id", "instance-" + i);
            p.put("dbtasks.queues.default", "8");
            p.put("dbtasks.poll-interval", "100ms");
            p.put("dbtasks.lease", "6s");
            p.put("dbtasks.statement-timeout", "4s");
            p.put("dbtasks.shutdown-timeout", "5s");
            p.put("dbtasks.default-retry.initial", "100ms");
            p.put("dbtasks.default-retry.jitter", "0");
            p.put("dbtasks.metrics.gauge-interval", "500ms");
            p.put("dbtasks.health.claim-loop-stall", "8s");
            p.put("cluster.ticker", "true");
            p.put("spring.main.banner-mode", "off");
            contexts.add(
                    new SpringApplicationBuilder(ClusterApp.class).properties(p).run());
        }
        started = Instant.now();
    }

    @AfterAll
    void stopInstances() throws Exception {
        contexts.forEach(ConfigurableApplicationContext::close);
        if (proxy != null) {
            proxy.close();
        }
    }

    @Test
    @Order(1)
    void aOneSecondScheduledRunOnceMethodRunsOncePerSecondSlotAcrossThreeInstances() throws Exception {
        Instant from = Instant.now().plusSeconds(1);
        Thread.sleep(21_000);
        long first = from.getEpochSecond();
        long last = first + 19;
        Map<Long, Integer> window = new HashMap<>();
        ClusterApp.TICKS.forEach((slot, n) -> {
            if (slot >= first && slot <= last) {
                window.put(slot, n.get());
            }
        });
        assertThat(ClusterApp.TICKS.values())
                .as("no second slot ran twice, by any of the three instances")
                .allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        // Each instance fires about once a second; a slot that none of the three hit (all three
        // timers drifting across the same boundary on a loaded machine) is possible but rare.
        assertThat(window.size()).as("second slots run out of 20: %s", window).isGreaterThanOrEqualTo(17);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_once WHERE once_key LIKE 'tick:%' AND status = 'SUCCEEDED'"))
                .isGreaterThanOrEqualTo(window.size());
    }

    @Test
    @Order(2)
    void enqueueInsideARolledBackTransactionLeavesNoTaskAndACommittedOneRuns() {
        ClusterApp.Orders orders = contexts.get(0).getBean(ClusterApp.Orders.class);
        assertThatThrownBy(() -> orders.placeJpa(1, true)).hasMessageContaining("payment declined");
        assertThatThrownBy(() -> orders.placeJdbc(2, true)).hasMessageContaining("payment declined");
        long jpa = orders.placeJpa(3, false);
        long jdbc = orders.placeJdbc(4, false);

        assertThat(count("SELECT COUNT(*) FROM cluster_order WHERE id IN (1, 2)"))
                .isZero();
        assertThat(
                        count(
                                "SELECT COUNT(*) FROM dbtasks_task WHERE kind = 'order.ship' AND payload LIKE '%\"orderId\":1}%'"))
                .isZero();
        assertThat(
                        count(
                                "SELECT COUNT(*) FROM dbtasks_task WHERE kind = 'order.ship' AND payload LIKE '%\"orderId\":2}%'"))
                .isZero();
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(ClusterApp.SHIPPED).contains(3L, 4L));
        assertThat(ClusterApp.SHIPPED).doesNotContain(1L, 2L);
        await().atMost(PATIENCE) // the handler ran; its SUCCEEDED is written in the next completion batch
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE id IN (" + jpa + ", " + jdbc
                                + ") AND status = 'SUCCEEDED'")
                        == 2);
    }

    @Test
    @Order(3)
    void prometheusCountersOfTheThreeInstancesMatchTheTaskTableAfterAThousandTasksWithFailures() throws Exception {
        DbTasks dbTasks = contexts.get(1).getBean(DbTasks.class);
        List<TaskRequest> requests = new ArrayList<>();
        for (int n = 0; n < 1000; n++) {
            requests.add(TaskRequest.of("flaky", n));
        }
        dbTasks.enqueueAll(requests);
        await().atMost(PATIENCE)
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE kind = 'flaky' AND status IN"
                                + " ('SUCCEEDED', 'FAILED')")
                        == 1000);
        long succeeded = count("SELECT COUNT(*) FROM dbtasks_task WHERE kind = 'flaky' AND status = 'SUCCEEDED'");
        long failed = count("SELECT COUNT(*) FROM dbtasks_task WHERE kind = 'flaky' AND status = 'FAILED'");
        long retried = count("SELECT COUNT(*) FROM dbtasks_attempt a JOIN dbtasks_task t ON t.id = a.task_id"
                + " WHERE t.kind = 'flaky' AND a.outcome = 'FAILED' AND t.status = 'SUCCEEDED'");
        // Every claim ends in exactly one attempt row (SUCCEEDED, FAILED, or LEASE_EXPIRED when an
        // instance stalls past its 6 s lease and another rescues the task, as a loaded CI machine
        // did once: 159 rescues, claims 1,258 against 1,100 successes and failures), unless it is
        // handed back unstarted, which writes none.
        long attempts = count("SELECT COUNT(*) FROM dbtasks_attempt a JOIN dbtasks_task t ON t.id = a.task_id"
                + " WHERE t.kind = 'flaky'");
        assertThat(succeeded).isEqualTo(900);
        assertThat(failed).isEqualTo(100);
        assertThat(retried).isEqualTo(100);
        await().atMost(PATIENCE).untilAsserted(() -> {
            assertThat(scrapedSum("dbtasks_tasks_attempts_total", "flaky", "succeeded"))
                    .isEqualTo(succeeded);
            assertThat(scrapedSum("dbtasks_tasks_attempts_total", "flaky", "failed"))
                    .isEqualTo(failed);
            assertThat(scrapedSum("dbtasks_tasks_attempts_total", "flaky", "retried"))
                    .isEqualTo(retried);
            assertThat(scrapedSum("dbtasks_tasks_claimed_total", "flaky", null))
                    .isEqualTo(attempts + scrapedSum("dbtasks_tasks_attempts_total", "flaky", "handed_back"));
        });
        assertThat(scrapedSum("dbtasks_tasks_enqueued_total", "flaky", null)).isEqualTo(1000);
        String page = get(contexts.get(0), "/actuator/prometheus");
        assertThat(page)
                .contains("dbtasks_tasks_execution_seconds")
                .contains("dbtasks_tasks_start_lag_seconds")
                .contains("dbtasks_queue_tasks{")
                .contains("dbtasks_queue_due{")
                .contains("dbtasks_queue_oldest_due_age_seconds{");
        assertThat(get(contexts.get(0), "/actuator/dbtasks")).contains("\"concurrency\":8");
    }

    @Test
    @Order(4)
    void aTraceRunsFromTheHttpRequestThroughTheEnqueueToTheTasksExecution() throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create(base(contexts.get(2)) + "/traced?name=x"))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        Matcher m = Pattern.compile("\"taskId\":(\\d+)").matcher(response.body());
        Matcher t = Pattern.compile("\"traceId\":\"([0-9a-f]*)\"").matcher(response.body());
        assertThat(m.find()).isTrue();
        assertThat(t.find()).isTrue();
        String traceId = t.group(1);
        assertThat(traceId).as("the request runs in a trace").hasSizeGreaterThanOrEqualTo(16);
        long taskId = Long.parseLong(m.group(1));
        await().atMost(PATIENCE).until(() -> ClusterApp.HANDLER_TRACES.containsKey(taskId));
        assertThat(ClusterApp.HANDLER_TRACES.get(taskId)).isEqualTo(traceId);
        String stored = contexts.get(0)
                .getBean(DbTasks.class)
                .find(taskId)
                .orElseThrow()
                .traceParent();
        assertThat(stored).startsWith("00-" + traceId + "-");
    }

    @Test
    @Order(5)
    void healthTurnsDownWithinTenSecondsOfLosingTheDatabaseAndUpAgainAfter() throws Exception {
        Assumptions.assumeTrue(proxy != null, "H2 runs in process: no network to cut");
        for (ConfigurableApplicationContext c : contexts) {
            await().atMost(PATIENCE).until(() -> get(c, "/actuator/health").contains("\"status\":\"UP\""));
        }
        proxy.cut();
        long cutAt = System.nanoTime();
        // The dbtasks component of /actuator/health, polled on every instance; the aggregate (which
        // also waits on the pool for Boot's own "db" indicator) is checked once afterwards.
        for (ConfigurableApplicationContext c : contexts) {
            await().atMost(Duration.ofSeconds(10).minusNanos(System.nanoTime() - cutAt))
                    .pollInterval(Duration.ofMillis(250))
                    .until(() -> get(c, "/actuator/health/dbtasks").contains("\"status\":\"DOWN\""));
        }
        long downMillis = (System.nanoTime() - cutAt) / 1_000_000;
        assertThat(downMillis).as("all three DOWN after %d ms", downMillis).isLessThan(10_000);
        String whole = get(contexts.get(0), "/actuator/health");
        assertThat(whole).endsWith("\"status\":\"DOWN\"}").contains("\"dbtasks\":{");
        proxy.restore();
        for (ConfigurableApplicationContext c : contexts) {
            await().atMost(PATIENCE)
                    .until(() -> get(c, "/actuator/health/dbtasks").contains("\"status\":\"UP\""));
        }
    }

    /** Sums a counter over the three instances' Prometheus pages, for kind and outcome (if given). */
    private long scrapedSum(String name, String kind, String outcome) throws Exception {
        double sum = 0;
        for (ConfigurableApplicationContext c : contexts) {
            for (String line : get(c, "/actuator/prometheus").split("\n")) {
                if (line.startsWith(name + "{")
                        && line.contains("kind=\"" + kind + "\"")
                        && (outcome == null || line.contains("outcome=\"" + outcome + "\""))) {
                    sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
        }
        return Math.round(sum);
    }

    private String get(ConfigurableApplicationContext c, String path) throws Exception {
        return http.send(
                        HttpRequest.newBuilder(URI.create(base(c) + path))
                                .timeout(Duration.ofSeconds(8))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    private static String base(ConfigurableApplicationContext c) {
        return "http://127.0.0.1:" + c.getEnvironment().getProperty("local.server.port");
    }

    private long count(String sql) {
        try (Connection c = contexts.get(0).getBean(javax.sql.DataSource.class).getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }
}
