package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.server.idempotency.IdempotencyStore;
import jakarta.servlet.Filter;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code Idempotency-Key} header, run once per database by the subclasses: replay of status and
 * body, 422 for another request under the same key, 409 while the first is in flight (50 concurrent
 * repeats), keys scoped per client, expiry (with a clock the test moves), and the body's
 * {@code idempotencyKey} refusing another kind or payload unless {@code returnExisting}.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dbtasks.server.seed-demo-jobs=false", "dbtasks.poll-interval=100ms"})
@TestPropertySource(locations = "classpath:test-users.properties")
@Import(IdempotencyKeyContract.Config.class)
abstract class IdempotencyKeyContract {
    private static final String OPERATOR = RawHttp.basic("operator", "operator-secret");
    private static final String OPERATOR2 = RawHttp.basic("operator2", "operator2-secret");

    @LocalServerPort
    int port;

    @Autowired
    JsonMapper mapper;

    @Autowired
    MovableClock clock;

    @Autowired
    IdempotencyStore store;

    @Autowired
    JdbcTemplate jdbc;

    RawHttp http;
    final String run = UUID.randomUUID().toString().substring(0, 8);
    final ExecutorService pool = Executors.newFixedThreadPool(51);

    /** A clock the test moves forward. */
    static final class MovableClock extends Clock {
        final AtomicLong offset = new AtomicLong();

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.now().plusMillis(offset.get());
        }
    }

    @TestConfiguration
    static class Config {
        @Bean
        MovableClock idempotencyClock() {
            return new MovableClock();
        }

        /** Holds requests with {@code X-Test-Slow: millis} that long, after the key is claimed. */
        @Bean
        FilterRegistrationBean<Filter> slowFilter() {
            FilterRegistrationBean<Filter> bean = new FilterRegistrationBean<>((request, response, chain) -> {
                String slow = ((jakarta.servlet.http.HttpServletRequest) request).getHeader("X-Test-Slow");
                if (slow != null) {
                    try {
                        Thread.sleep(Long.parseLong(slow));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                chain.doFilter(request, response);
            });
            bean.setOrder(10);
            return bean;
        }
    }

    @BeforeEach
    void client() {
        http = new RawHttp(port);
    }

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    @Test
    void repeatReplaysStatusAndBodyAndCreatesNothing() {
        String queue = "idem-h-" + run;
        String body = task(queue, 1);
        RawHttp.Response first = post("/api/tasks", OPERATOR, "k1-" + run, body, null);
        RawHttp.Response second = post("/api/tasks", OPERATOR, "\"k1-" + run + "\"", body, null);
        assertThat(first.status()).isEqualTo(201);
        assertThat(first.header("Idempotent-Replayed")).isNull();
        assertThat(second.status()).isEqualTo(201);
        assertThat(second.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(second.header("Location"))
                .isEqualTo(first.header("Location"))
                .startsWith("/api/tasks/");
        assertThat(total(queue)).isEqualTo(1);

        // An operator action: the second cancel would be 409 without the key; with it, the first 200 again.
        long id = json(first).path("id").asLong();
        RawHttp.Response cancel = post("/api/tasks/" + id + "/cancel", OPERATOR, "c1-" + run, null, null);
        RawHttp.Response again = post("/api/tasks/" + id + "/cancel", OPERATOR, "c1-" + run, null, null);
        assertThat(cancel.status()).isEqualTo(200);
        assertThat(json(cancel).path("status").asString()).isEqualTo("CANCELLED");
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.body()).isEqualTo(cancel.body());
        assertThat(post("/api/tasks/" + id + "/cancel", OPERATOR, null, null, null)
                        .status())
                .isEqualTo(409);
    }

    @Test
    void sameKeyWithAnotherRequestIs422() {
        String queue = "idem-422-" + run;
        assertThat(post("/api/tasks", OPERATOR, "k2-" + run, task(queue, 1), null)
                        .status())
                .isEqualTo(201);
        RawHttp.Response otherBody = post("/api/tasks", OPERATOR, "k2-" + run, task(queue, 2), null);
        assertThat(otherBody.status()).isEqualTo(422);
        assertThat(otherBody.contentType()).startsWith("application/problem+json");
        assertThat(json(otherBody).path("detail").asString()).contains("different request");
        assertThat(post("/api/tasks/1/cancel", OPERATOR, "k2-" + run, null, null)
                        .status())
                .isEqualTo(422);
        assertThat(total(queue)).isEqualTo(1);
        assertThat(post("/api/tasks", OPERATOR, "k\u0001", task(queue, 1), null).status())
                .isEqualTo(400);
        assertThat(post("/api/tasks", OPERATOR, "x".repeat(256), task(queue, 1), null)
                        .status())
                .isEqualTo(400);
    }

    @Test
    void keysAreScopedToTheClient() {
        String queue = "idem-scope-" + run;
        RawHttp.Response mine = post("/api/tasks", OPERATOR, "k3-" + run, task(queue, 1), null);
        RawHttp.Response theirs = post("/api/tasks", OPERATOR2, "k3-" + run, task(queue, 1), null);
        assertThat(mine.status()).isEqualTo(201);
        assertThat(theirs.status()).isEqualTo(201);
        assertThat(theirs.header("Idempotent-Replayed")).isNull();
        assertThat(json(theirs).path("id").asLong())
                .isNotEqualTo(json(mine).path("id").asLong());
        assertThat(total(queue)).isEqualTo(2);
    }

    @Test
    void fiftyRepeatsWhileTheFirstIsInFlightGet409ThenTheReplay() throws Exception {
        String queue = "idem-409-" + run;
        String key = "k4-" + run;
        String body = task(queue, 1);
        Future<RawHttp.Response> first = pool.submit(() -> post("/api/tasks", OPERATOR, key, body, "3000"));
        await().atMost(Duration.ofSeconds(20))
                .until(() -> jdbc.queryForObject(
                                "SELECT count(*) FROM dbtasks_server_idempotency WHERE idem_key = ? AND state = 'IN_FLIGHT'",
                                Integer.class,
                                key)
                        == 1);
        List<Future<RawHttp.Response>> repeats = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        for (int i = 0; i < 50; i++) {
            repeats.add(pool.submit(() -> {
                start.await();
                return post("/api/tasks", OPERATOR, key, body, null);
            }));
        }
        start.countDown();
        int conflicts = 0;
        int replays = 0;
        for (Future<RawHttp.Response> f : repeats) {
            RawHttp.Response r = f.get();
            if (r.status() == 409) {
                conflicts++;
                assertThat(r.header("Retry-After")).isEqualTo("1");
                assertThat(r.contentType()).startsWith("application/problem+json");
            } else {
                // Only if the machine stalled the repeats past the 3 s the first one takes.
                assertThat(r.status()).isEqualTo(201);
                assertThat(r.header("Idempotent-Replayed")).isEqualTo("true");
                replays++;
            }
        }
        assertThat(conflicts + replays).isEqualTo(50);
        assertThat(conflicts).isGreaterThan(0);
        RawHttp.Response done = first.get();
        assertThat(done.status()).isEqualTo(201);
        RawHttp.Response after = post("/api/tasks", OPERATOR, key, body, null);
        assertThat(after.status()).isEqualTo(201);
        assertThat(after.body()).isEqualTo(done.body());
        assertThat(total(queue)).isEqualTo(1);
    }

    @Test
    void fiftyConcurrentFirstRequestsMakeOneTask() throws Exception {
        String queue = "idem-burst-" + run;
        String key = "k5-" + run;
        String body = task(queue, 1);
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<RawHttp.Response>> all = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            all.add(CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            start.await();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                        return post("/api/tasks", OPERATOR, key, body, null);
                    },
                    pool));
        }
        start.countDown();
        int originals = 0;
        String created = null;
        List<RawHttp.Response> responses = new ArrayList<>();
        for (CompletableFuture<RawHttp.Response> f : all) {
            responses.add(f.get());
        }
        for (RawHttp.Response r : responses) {
            assertThat(r.status()).isIn(201, 409);
            if (r.status() == 201 && r.header("Idempotent-Replayed") == null) {
                originals++;
                created = r.body();
            }
        }
        assertThat(originals).isEqualTo(1);
        for (RawHttp.Response r : responses) {
            if (r.status() == 201) {
                assertThat(r.body()).isEqualTo(created);
            }
        }
        assertThat(total(queue)).isEqualTo(1);
    }

    @Test
    void keysExpireAfterTheirTtl() {
        String queue = "idem-ttl-" + run;
        String key = "k6-" + run;
        assertThat(post("/api/tasks", OPERATOR, key, task(queue, 1), null).status())
                .isEqualTo(201);
        clock.offset.addAndGet(Duration.ofHours(23).toMillis());
        assertThat(post("/api/tasks", OPERATOR, key, task(queue, 1), null).header("Idempotent-Replayed"))
                .isEqualTo("true");
        clock.offset.addAndGet(Duration.ofHours(1).plusSeconds(1).toMillis());
        RawHttp.Response fresh = post("/api/tasks", OPERATOR, key, task(queue, 1), null);
        assertThat(fresh.status()).isEqualTo(201);
        assertThat(fresh.header("Idempotent-Replayed")).isNull();
        assertThat(total(queue)).isEqualTo(2);
        // A different request may use the expired key too, and the sweep deletes expired records.
        String other = "k7-" + run;
        assertThat(post("/api/tasks", OPERATOR, other, task(queue, 1), null).status())
                .isEqualTo(201);
        clock.offset.addAndGet(Duration.ofHours(25).toMillis());
        assertThat(store.sweep()).isGreaterThanOrEqualTo(2);
        assertThat(jdbc.queryForObject(
                        "SELECT count(*) FROM dbtasks_server_idempotency WHERE idem_key IN (?, ?)",
                        Integer.class,
                        key,
                        other))
                .isZero();
    }

    @Test
    void bodyKeyWithAnotherKindOrPayloadIs422UnlessReturnExisting() {
        String queue = "idem-body-" + run;
        String key = "task-key-" + run;
        String first = "{\"kind\":\"order.sync\",\"queue\":\"" + queue
                + "\",\"payload\":{\"orderId\":1,\"operator\":\"a\"},\"idempotencyKey\":\"" + key + "\"}";
        String otherPayload = first.replace("\"orderId\":1", "\"orderId\":2");
        String otherKind =
                "{\"kind\":\"order.no-param\",\"queue\":\"" + queue + "\",\"idempotencyKey\":\"" + key + "\"}";
        RawHttp.Response created = post("/api/tasks", OPERATOR, null, first, null);
        assertThat(created.status()).isEqualTo(201);
        assertThat(post("/api/tasks", OPERATOR, null, first, null).status()).isEqualTo(200);
        RawHttp.Response refused = post("/api/tasks", OPERATOR, null, otherPayload, null);
        assertThat(refused.status()).isEqualTo(422);
        assertThat(json(refused).path("detail").asString()).contains(key, "returnExisting");
        assertThat(post("/api/tasks", OPERATOR, null, otherKind, null).status()).isEqualTo(422);
        RawHttp.Response existing = post("/api/tasks?returnExisting=true", OPERATOR, null, otherPayload, null);
        assertThat(existing.status()).isEqualTo(200);
        assertThat(json(existing).path("id").asLong())
                .isEqualTo(json(created).path("id").asLong());
        String flagInBody = otherKind.replace("}", ",\"returnExisting\":true}");
        assertThat(post("/api/tasks", OPERATOR, null, flagInBody, null).status())
                .isEqualTo(200);
        assertThat(total(queue)).isEqualTo(1);
    }

    // --- helpers ---------------------------------------------------------------------------------

    private static String task(String queue, int orderId) {
        return "{\"kind\":\"order.sync\",\"queue\":\"" + queue + "\",\"payload\":{\"orderId\":" + orderId
                + ",\"operator\":\"idem\"}}";
    }

    private RawHttp.Response post(String path, String auth, String key, String json, String slowMillis) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", auth);
        if (key != null) {
            headers.put("Idempotency-Key", key);
        }
        if (json != null) {
            headers.put("Content-Type", "application/json");
        }
        if (slowMillis != null) {
            headers.put("X-Test-Slow", slowMillis);
        }
        return http.send("POST", path, headers, json == null ? null : json.getBytes(StandardCharsets.UTF_8));
    }

    private long total(String queue) {
        return json(http.send("GET", "/api/tasks?queue=" + queue, Map.of("Authorization", OPERATOR), null))
                .path("total")
                .asLong();
    }

    private JsonNode json(RawHttp.Response r) {
        return mapper.readTree(r.body());
    }
}
