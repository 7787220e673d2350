package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.server.demo.SeedJobs;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The REST API's behaviour, run once per database by the subclasses, each of which points
 * {@code spring.datasource.url} at its database. The server runs on a random port with its real
 * configuration, seed jobs included, and fast test timings. Tests that count tasks use a queue of
 * their own that no worker serves, so their tasks stay where the test puts them.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.poll-interval=50ms",
            "dbtasks.rescue-interval=1s",
            "dbtasks.shutdown-timeout=2s",
            "dbtasks.default-retry.backoff=fixed",
            "dbtasks.default-retry.initial=100ms"
        })
@TestPropertySource(locations = "classpath:test-users.properties")
@AutoConfigureRestTestClient
abstract class TaskApiContract {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final MediaType PROBLEM = MediaType.APPLICATION_PROBLEM_JSON;

    @Autowired
    RestTestClient client;

    @Autowired
    JsonMapper mapper;

    @Autowired
    SeedJobs seedJobs;

    @BeforeEach
    void authenticate() {
        client = client.mutate()
                .defaultHeaders(h -> h.setBasicAuth("admin", "admin-secret"))
                .build();
    }

    /** A suffix that keeps this test's keys and queues apart from every other test's and run's. */
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    record Response(int status, HttpHeaders headers, JsonNode body) {
        MediaType contentType() {
            return headers.getContentType();
        }

        String detail() {
            return body.path("detail").asString();
        }
    }

    // --- seed jobs -------------------------------------------------------------------------------

    @Test
    void seedJobsAreJobDefinitionsThatRunToSucceededAndAreNotRunAgainOnRestart() throws Exception {
        List<String> codes = List.of("no_param_job", "sync_order_job", "create_order_job");
        for (String code : codes) {
            await().atMost(WAIT)
                    .until(() -> "SUCCEEDED".equals(job(code).path("lastStatus").asString()));
        }
        JsonNode createJob = job("create_order_job");
        assertThat(createJob.path("bean").asString()).isEqualTo("orderService");
        assertThat(createJob.path("method").asString()).isEqualTo("createOrder");
        assertThat(createJob.path("parameterTypes")).isEqualTo(json("[\"io.dbtasks.server.demo.OrderDto\"]"));
        assertThat(createJob.path("arguments"))
                .isEqualTo(json("[{\"orderId\":20001,\"userName\":\"Tom\",\"amount\":199.99}]"));
        assertThat(createJob.path("businessType").asString()).isEqualTo("order");
        assertThat(createJob.path("businessId").asString()).isEqualTo("ORDER-20001");
        JsonNode createTask =
                get("/api/tasks/" + createJob.path("lastTaskId").asLong()).body();
        assertThat(createTask.path("kind").asString()).isEqualTo("dbtasks.job");
        assertThat(createTask.path("name").asString()).isEqualTo("create_order_job");
        assertThat(createTask.path("reference").asString()).isEqualTo("ORDER-20001");
        assertThat(createTask.path("maxAttempts").asInt()).isEqualTo(3);
        assertThat(createTask.path("payload").path("arguments").asString())
                .isEqualTo("[{\"orderId\":20001,\"userName\":\"Tom\",\"amount\":199.99}]");
        Response attempts = get("/api/tasks/" + createJob.path("lastTaskId").asLong() + "/attempts");
        assertThat(outcomes(attempts.body())).containsExactly("SUCCEEDED");
        JsonNode sync = job("sync_order_job");
        assertThat(sync.path("arguments")).isEqualTo(json("[10001,\"admin\"]"));
        JsonNode noParam = job("no_param_job");
        assertThat(noParam.path("name").asString()).isEqualTo("No-param test job");
        assertThat(noParam.path("businessId").asString()).isEqualTo("TEST-001");
        assertThat(noParam.path("cron").asString()).isEqualTo("0 * * * * *");

        // What a restart does: the definitions are found and not run again.
        seedJobs.run(null);
        assertThat(job("create_order_job").path("lastTaskId").asLong())
                .isEqualTo(createJob.path("lastTaskId").asLong());
        assertThat(job("create_order_job").path("runs").asLong()).isEqualTo(1);
        assertThat(job("sync_order_job").path("lastTaskId").asLong())
                .isEqualTo(sync.path("lastTaskId").asLong());
    }

    private JsonNode job(String code) {
        return get("/api/jobs/" + code).body();
    }

    // --- workflows -------------------------------------------------------------------------------

    @Test
    void aWorkflowIsInsertedRunInDependencyOrderReadCancelledAndRefusedWithACycle() {
        Response created = post(
                "/api/workflows",
                "{\"name\":\"wf-" + run + "\",\"steps\":["
                        + "{\"name\":\"b\",\"kind\":\"order.no-param\",\"dependsOn\":[{\"step\":\"a\"}]},"
                        + "{\"name\":\"a\",\"kind\":\"order.no-param\"}]}");
        assertThat(created.status()).isEqualTo(201);
        long id = created.body().path("id").asLong();
        assertThat(created.headers().getLocation().getPath()).isEqualTo("/api/workflows/" + id);
        assertThat(created.body().path("steps").get(0).path("name").asString()).isEqualTo("a");
        assertThat(created.body().path("steps").get(1).path("status").asString())
                .isEqualTo("WAITING");
        await().atMost(WAIT).until(() -> {
            JsonNode steps = get("/api/workflows/" + id).body().path("steps");
            return "SUCCEEDED".equals(steps.get(0).path("status").asString())
                    && "SUCCEEDED".equals(steps.get(1).path("status").asString());
        });
        assertThat(get("/api/workflows/" + id).body().path("steps").get(1).path("dependsOn"))
                .isEqualTo(json("[{\"step\":\"a\",\"onFailure\":\"CANCEL\"}]"));

        Response idle = post(
                "/api/workflows",
                "{\"name\":\"idle\",\"steps\":[{\"name\":\"a\",\"kind\":\"order.no-param\",\"queue\":\"idle-" + run
                        + "\"},{\"name\":\"b\",\"kind\":\"order.no-param\",\"dependsOn\":[{\"step\":\"a\"}]}]}");
        long idleId = idle.body().path("id").asLong();
        Response cancelled = post("/api/workflows/" + idleId + "/cancellations", null);
        assertThat(cancelled.body().path("cancelled").asInt()).isEqualTo(2);

        assertProblem(
                post(
                        "/api/workflows",
                        "{\"name\":\"loop\",\"steps\":[{\"name\":\"a\",\"kind\":\"order.no-param\","
                                + "\"dependsOn\":[{\"step\":\"b\"}]},{\"name\":\"b\",\"kind\":\"order.no-param\","
                                + "\"dependsOn\":[{\"step\":\"a\"}]}]}"),
                400,
                "has a cycle: a -> b -> a");
        assertProblem(
                post("/api/workflows", "{\"name\":\"w\",\"steps\":[{\"name\":\"a\",\"kind\":\"no.such\"}]}"),
                400,
                "'kind' of step 'a'");
        assertProblem(get("/api/workflows/999999999"), 404, "No workflow has id 999999999");
    }

    // --- create ----------------------------------------------------------------------------------

    @Test
    void createdTaskIsReturnedWithLocationAndEmbeddedPayload() {
        Response r = post(
                "/api/tasks",
                "{\"kind\":\"order.sync\",\"payload\":{\"orderId\":42,\"operator\":\"ann\"},\"queue\":\"idle-" + run
                        + "\",\"priority\":5,\"maxAttempts\":4,\"name\":\"Sync 42\",\"reference\":\"ORDER-42\","
                        + "\"runAt\":\"2030-01-01T00:00:00Z\"}");
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.contentType().isCompatibleWith(MediaType.APPLICATION_JSON)).isTrue();
        long id = r.body().path("id").asLong();
        assertThat(r.headers().getLocation()).isNotNull();
        assertThat(r.headers().getLocation().getPath()).isEqualTo("/api/tasks/" + id);
        JsonNode t = r.body();
        assertThat(t.path("kind").asString()).isEqualTo("order.sync");
        assertThat(t.path("queue").asString()).isEqualTo("idle-" + run);
        assertThat(t.path("status").asString()).isEqualTo("PENDING");
        assertThat(t.path("priority").asInt()).isEqualTo(5);
        assertThat(t.path("attempt").asInt()).isZero();
        assertThat(t.path("maxAttempts").asInt()).isEqualTo(4);
        assertThat(t.path("name").asString()).isEqualTo("Sync 42");
        assertThat(t.path("reference").asString()).isEqualTo("ORDER-42");
        assertThat(t.path("payload")).isEqualTo(json("{\"orderId\":42,\"operator\":\"ann\"}"));
        assertThat(Instant.parse(t.path("runAt").asString())).isEqualTo(Instant.parse("2030-01-01T00:00:00Z"));
        assertThat(Instant.parse(t.path("createdAt").asString()))
                .isBefore(Instant.now().plusSeconds(60));
        assertThat(t.path("cancelRequested").asBoolean()).isFalse();
        assertThat(t.has("leaseOwner")).isTrue();
        assertThat(t.has("lastError")).isTrue();

        assertThat(get("/api/tasks/" + id).body()).isEqualTo(t);
    }

    @Test
    void limitsAreSetListedAndRemovedThroughTheApiAndATaskShowsItsConcurrencyKey() {
        String queue = "idle-" + run;
        Response set = put("/api/limits", "{\"queue\":\"" + queue + "\",\"keyPattern\":\"*\",\"maxRunning\":1}");
        assertThat(set.status()).isEqualTo(200);
        assertThat(set.body().path("maxRunning").asInt()).isEqualTo(1);
        JsonNode listed = get("/api/limits").body();
        List<String> queues = new ArrayList<>();
        listed.forEach(l -> queues.add(
                l.path("queue").asString() + " " + l.path("keyPattern").asString()));
        assertThat(queues).contains(queue + " *");
        assertThat(put("/api/limits", "{\"queue\":\"" + queue + "\",\"keyPattern\":\"*\",\"maxRunning\":0}")
                        .status())
                .isEqualTo(400);

        Response task = post(
                "/api/tasks",
                "{\"kind\":\"order.sync\",\"payload\":{\"orderId\":7,\"operator\":\"ann\"},\"queue\":\"" + queue
                        + "\",\"concurrencyKey\":\"tenant-1\"}");
        assertThat(task.status()).isEqualTo(201);
        JsonNode shown = get("/api/tasks/" + task.body().path("id").asLong()).body();
        assertThat(shown.path("concurrencyKey").asString()).isEqualTo("tenant-1");
        assertThat(shown.path("waitReason").isNull())
                .as("nothing of the key runs")
                .isTrue();
        JsonNode keys = get("/api/limits/keys?queue=" + queue).body();
        assertThat(keys.size()).isEqualTo(1);
        assertThat(keys.get(0).path("key").asString()).isEqualTo("tenant-1");
        assertThat(keys.get(0).path("running").asLong()).isZero();
        assertThat(keys.get(0).path("waiting").asLong()).isEqualTo(1);
        assertThat(keys.get(0).path("limit").path("maxRunning").asInt()).isEqualTo(1);

        assertThat(response(client.delete()
                                .uri("/api/limits?queue={queue}&keyPattern={pattern}", queue, "a\u0000b")
                                .exchange()
                                .returnResult(String.class))
                        .status())
                .as("the same text checks as a PUT: NUL refused")
                .isEqualTo(400);
        assertThat(delete("/api/limits?queue=" + queue + "&keyPattern=*").status())
                .isEqualTo(204);
        assertThat(delete("/api/limits?queue=" + queue + "&keyPattern=*").status())
                .isEqualTo(404);
    }

    @Test
    void aQueueIsMadeFairAndPlainAgainThroughTheApi() {
        String queue = "fair-" + run;
        Response set = put("/api/limits/fair", "{\"queue\":\"" + queue + "\",\"fair\":true}");
        assertThat(set.status()).isEqualTo(200);
        assertThat(set.body().path("fair").asBoolean()).isTrue();
        List<String> fair = new ArrayList<>();
        get("/api/limits/fair").body().forEach(q -> fair.add(q.asString()));
        assertThat(fair).contains(queue);
        assertThat(put("/api/limits/fair", "{\"queue\":\"" + queue + "\"}").status())
                .as("fair is required")
                .isEqualTo(400);
        assertThat(put("/api/limits/fair", "{\"queue\":\"" + queue + "\",\"fair\":false}")
                        .status())
                .isEqualTo(200);
        List<String> after = new ArrayList<>();
        get("/api/limits/fair").body().forEach(q -> after.add(q.asString()));
        assertThat(after).doesNotContain(queue);
    }

    @Test
    void aRateLimitRoundTripsThroughTheApiAndBadRatesAreRefusedWithTheReason() {
        String queue = "rated-" + run;
        Response rateOnly = put(
                "/api/limits",
                "{\"queue\":\"" + queue + "\",\"keyPattern\":\"api-*\",\"rateStarts\":10,\"ratePeriodMillis\":1000}");
        assertThat(rateOnly.status()).isEqualTo(200);
        assertThat(rateOnly.body().path("maxRunning").isNull()).isTrue();
        assertThat(rateOnly.body().path("rate").asString()).isEqualTo("10 starts per 1s");
        Response both = put(
                "/api/limits",
                "{\"queue\":\"" + queue + "\",\"keyPattern\":\"host-a\",\"maxRunning\":2,\"rateStarts\":3,"
                        + "\"ratePeriodMillis\":60000}");
        assertThat(both.status()).isEqualTo(200);
        JsonNode listed = null;
        for (JsonNode l : get("/api/limits").body()) {
            if (l.path("queue").asString().equals(queue)
                    && l.path("keyPattern").asString().equals("host-a")) {
                listed = l;
            }
        }
        assertThat(listed).isNotNull();
        assertThat(listed.path("maxRunning").asInt()).isEqualTo(2);
        assertThat(listed.path("rateStarts").asInt()).isEqualTo(3);
        assertThat(listed.path("ratePeriodMillis").asLong()).isEqualTo(60_000);
        assertThat(listed.path("rate").asString()).isEqualTo("3 starts per 1m");

        Response noStarts = put(
                "/api/limits",
                "{\"queue\":\"" + queue + "\",\"keyPattern\":\"*\",\"rateStarts\":0,\"ratePeriodMillis\":1000}");
        assertThat(noStarts.status()).isEqualTo(400);
        assertThat(noStarts.body().toString()).contains("at least 1 start per period");
        Response noPeriod = put(
                "/api/limits",
                "{\"queue\":\"" + queue + "\",\"keyPattern\":\"*\",\"rateStarts\":5,\"ratePeriodMillis\":0}");
        assertThat(noPeriod.status()).isEqualTo(400);
        assertThat(noPeriod.body().toString()).contains("at least 1 ms");
        Response half = put("/api/limits", "{\"queue\":\"" + queue + "\",\"keyPattern\":\"*\",\"rateStarts\":5}");
        assertThat(half.status()).isEqualTo(400);
        assertThat(half.body().toString()).contains("ratePeriodMillis");
        assertThat(delete("/api/limits?queue=" + queue + "&keyPattern=api-*").status())
                .isEqualTo(204);
        assertThat(delete("/api/limits?queue=" + queue + "&keyPattern=host-a").status())
                .isEqualTo(204);
    }

    @Test
    void aQueueWideRateRoundTripsThroughTheApiAndBadRatesAreRefused() {
        String queue = "qrated-" + run;
        Response set = put(
                "/api/limits/queue-rates", "{\"queue\":\"" + queue + "\",\"rateStarts\":10,\"ratePeriodMillis\":1000}");
        assertThat(set.status()).isEqualTo(200);
        assertThat(set.body().path("rate").asString()).isEqualTo("10 starts per 1s");
        JsonNode listed = null;
        for (JsonNode r : get("/api/limits/queue-rates").body()) {
            if (r.path("queue").asString().equals(queue)) {
                listed = r;
            }
        }
        assertThat(listed).isNotNull();
        assertThat(listed.path("rateStarts").asInt()).isEqualTo(10);
        assertThat(listed.path("ratePeriodMillis").asLong()).isEqualTo(1000);

        Response noStarts = put(
                "/api/limits/queue-rates", "{\"queue\":\"" + queue + "\",\"rateStarts\":0,\"ratePeriodMillis\":1000}");
        assertThat(noStarts.status()).isEqualTo(400);
        assertThat(noStarts.body().toString()).contains("at least 1 start per period");
        Response half = put("/api/limits/queue-rates", "{\"queue\":\"" + queue + "\",\"rateStarts\":5}");
        assertThat(half.status()).isEqualTo(400);
        assertThat(half.body().toString()).contains("ratePeriodMillis");
        Response noQueue = put("/api/limits/queue-rates", "{\"rateStarts\":5,\"ratePeriodMillis\":1000}");
        assertThat(noQueue.status()).isEqualTo(400);

        assertThat(delete("/api/limits/queue-rates?queue=" + queue).status()).isEqualTo(204);
        assertThat(delete("/api/limits/queue-rates?queue=" + queue).status()).isEqualTo(404);
        for (JsonNode r : get("/api/limits/queue-rates").body()) {
            assertThat(r.path("queue").asString()).isNotEqualTo(queue);
        }
    }

    @Test
    void sameIdempotencyKeyTwiceGives201Then200AndOneTask() {
        String body = "{\"kind\":\"order.create\",\"payload\":{\"orderId\":7,\"userName\":\"Ann\",\"amount\":12.5},"
                + "\"queue\":\"idem-" + run + "\",\"idempotencyKey\":\"order-7-" + run + "\"}";
        Response first = post("/api/tasks", body);
        Response second = post("/api/tasks", body);
        assertThat(first.status()).isEqualTo(201);
        assertThat(second.status()).isEqualTo(200);
        assertThat(second.headers().getLocation()).isNull();
        assertThat(second.body().path("id").asLong())
                .isEqualTo(first.body().path("id").asLong());
        assertThat(second.body().path("idempotencyKey").asString()).isEqualTo("order-7-" + run);
        assertThat(get("/api/tasks?queue=idem-" + run).body().path("total").asLong())
                .isEqualTo(1);
    }

    @Test
    void unknownKindIs400() {
        Response r = post("/api/tasks", "{\"kind\":\"no.such.kind\",\"payload\":{}}");
        assertProblem(r, 400, "Unknown task kind 'no.such.kind'");
        assertThat(r.detail()).contains("order.create", "order.sync", "order.no-param", "demo.flaky");
    }

    @Test
    void malformedJsonIs400() {
        assertProblem(post("/api/tasks", "{\"kind\": \"order.sync\", "), 400, "not valid JSON");
        assertProblem(post("/api/tasks", "not json at all"), 400, "not valid JSON");
        assertProblem(post("/api/tasks", ""), 400, "request body is required");
    }

    @Test
    void bodyOfWrongShapeIs400() {
        assertProblem(post("/api/tasks", "{\"payload\":{}}"), 400, "'kind' is required");
        assertProblem(post("/api/tasks", "{\"kind\":\"order.no-param\",\"priority\":\"high\"}"), 400, "'priority'");
        assertProblem(post("/api/tasks", "{\"kind\":\"order.no-param\",\"maxAttempts\":0}"), 400, "'maxAttempts'");
        assertProblem(post("/api/tasks", "{\"kind\":\"order.no-param\",\"runAt\":\"tomorrow\"}"), 400, "'runAt'");
        assertProblem(post("/api/tasks", "{\"kind\":\"order.no-param\",\"maxAttempt\":3}"), 400, "'maxAttempt'");
        assertProblem(post("/api/tasks", "[1,2]"), 400, "expected shape");
        assertProblem(post("/api/tasks", "{\"kind\":\"order.no-param\",\"queue\":\" \"}"), 400, "queue");
    }

    @Test
    void payloadOfWrongShapeForItsKindIs400() {
        assertProblem(
                post("/api/tasks", "{\"kind\":\"order.create\",\"payload\":{\"orderId\":\"abc\"}}"),
                400,
                "'payload.orderId'");
        assertProblem(
                post("/api/tasks", "{\"kind\":\"order.create\",\"payload\":{\"orderId\":1,\"userName\":\"Tom\"}}"),
                400,
                "amount is required");
        assertProblem(
                post("/api/tasks", "{\"kind\":\"order.create\",\"payload\":[20001,\"Tom\",199.99]}"),
                400,
                "does not fit task kind 'order.create'");
        assertProblem(
                post("/api/tasks", "{\"kind\":\"order.sync\",\"payload\":{\"orderId\":1,\"operator\":\"a\",\"x\":1}}"),
                400,
                "'payload.x'");
        assertProblem(post("/api/tasks", "{\"kind\":\"order.sync\"}"), 400, "'payload' is required");
        assertProblem(post("/api/tasks", "{\"kind\":\"order.create\",\"payload\":null}"), 400, "'payload' is required");
        assertProblem(
                post("/api/tasks", "{\"kind\":\"demo.flaky\",\"payload\":{\"failTimes\":-1}}"),
                400,
                "failTimes must not be negative");
    }

    // --- read ------------------------------------------------------------------------------------

    @Test
    void unknownTaskIs404() {
        assertProblem(get("/api/tasks/987654321"), 404, "No task has id 987654321");
        assertProblem(get("/api/tasks/987654321/attempts"), 404, "987654321");
        assertProblem(post("/api/tasks/987654321/cancel", null), 404, "987654321");
        assertProblem(post("/api/tasks/987654321/retry", null), 404, "987654321");
        assertProblem(get("/api/tasks/by-key/no-such-key-" + run), 404, "no-such-key-" + run);
        assertProblem(post("/api/tasks/run?key=no-such-key-" + run, null), 404, "no-such-key-" + run);
    }

    @Test
    void badPathAndQueryParametersAre400() {
        assertProblem(get("/api/tasks/abc"), 400, "'id' must be an integer");
        assertProblem(get("/api/tasks?status=BOGUS"), 400, "'status' must be one of");
        assertProblem(get("/api/tasks?page=abc"), 400, "'page' must be an integer");
        assertProblem(get("/api/tasks?page=-1"), 400, "'page' must be 0 or more");
        assertProblem(get("/api/tasks?size=0"), 400, "'size' must be 1 to 1000");
        assertProblem(get("/api/tasks?size=1001"), 400, "'size' must be 1 to 1000");
        assertProblem(post("/api/tasks/run", null), 400, "key");
        assertProblem(post("/api/tasks/1/retry?additionalAttempts=0", null), 400, "additionalAttempts");
    }

    @Test
    void listPagesAndFilters() {
        String queue = "list-" + run;
        for (int i = 0; i < 5; i++) {
            assertThat(post("/api/tasks", "{\"kind\":\"order.no-param\",\"queue\":\"" + queue + "\"}")
                            .status())
                    .isEqualTo(201);
        }
        List<Long> syncIds = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            syncIds.add(post(
                            "/api/tasks",
                            "{\"kind\":\"order.sync\",\"queue\":\"" + queue + "\",\"payload\":{\"orderId\":" + i
                                    + ",\"operator\":\"x\"}}")
                    .body()
                    .path("id")
                    .asLong());
        }

        JsonNode all = get("/api/tasks?queue=" + queue).body();
        assertThat(all.path("total").asLong()).isEqualTo(7);
        assertThat(all.path("page").asInt()).isZero();
        assertThat(all.path("size").asInt()).isEqualTo(20);
        assertThat(all.path("items")).hasSize(7);
        // Newest first.
        assertThat(all.path("items").get(0).path("id").asLong()).isEqualTo(syncIds.get(1));

        JsonNode page0 = get("/api/tasks?queue=" + queue + "&size=3&page=0").body();
        JsonNode page2 = get("/api/tasks?queue=" + queue + "&size=3&page=2").body();
        JsonNode page3 = get("/api/tasks?queue=" + queue + "&size=3&page=3").body();
        assertThat(page0.path("items")).hasSize(3);
        assertThat(page0.path("total").asLong()).isEqualTo(7);
        assertThat(page2.path("items")).hasSize(1);
        assertThat(page2.path("page").asInt()).isEqualTo(2);
        assertThat(page3.path("items")).isEmpty();

        JsonNode syncs = get("/api/tasks?queue=" + queue + "&kind=order.sync").body();
        assertThat(syncs.path("total").asLong()).isEqualTo(2);
        assertThat(ids(syncs)).containsExactlyInAnyOrderElementsOf(syncIds);

        post("/api/tasks/" + syncIds.get(0) + "/cancel", null);
        assertThat(get("/api/tasks?queue=" + queue + "&status=PENDING")
                        .body()
                        .path("total")
                        .asLong())
                .isEqualTo(6);
        JsonNode cancelled =
                get("/api/tasks?queue=" + queue + "&status=cancelled").body();
        assertThat(ids(cancelled)).containsExactly(syncIds.get(0));
        assertThat(get("/api/tasks?queue=" + queue + "&status=SUCCEEDED&kind=order.sync")
                        .body()
                        .path("total")
                        .asLong())
                .isZero();
    }

    @Test
    void searchFiltersAndPagesByKeyset() {
        String queue = "search-" + run;
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(post(
                            "/api/tasks",
                            "{\"kind\":\"order.sync\",\"queue\":\"" + queue + "\",\"reference\":\"R-" + run + "-" + i
                                    + "\",\"idempotencyKey\":\"k-" + run + "-" + i + "\",\"payload\":{\"orderId\":" + i
                                    + ",\"operator\":\"op" + (i % 2) + "\"}}")
                    .body()
                    .path("id")
                    .asLong());
        }
        List<Long> newestFirst = new ArrayList<>(ids);
        java.util.Collections.reverse(newestFirst);

        // Keyset pages of two: every task once, newest first, a cursor until the last page, no total.
        List<Long> seen = new ArrayList<>();
        String uri = "/api/tasks?paging=keyset&size=2&queue=" + queue;
        JsonNode page = get(uri).body();
        int pages = 1;
        seen.addAll(ids(page));
        assertThat(page.has("total")).isFalse();
        while (page.hasNonNull("next")) {
            page = get(uri + "&before=" + page.path("next").asLong()).body();
            seen.addAll(ids(page));
            pages++;
        }
        assertThat(pages).isEqualTo(3);
        assertThat(seen).containsExactlyElementsOf(newestFirst);
        // Offset listings still carry the total and no cursor.
        JsonNode offset = get("/api/tasks?queue=" + queue).body();
        assertThat(offset.path("total").asLong()).isEqualTo(5);
        assertThat(offset.has("next")).isFalse();

        assertThat(ids(get("/api/tasks?reference=R-" + run + "-3").body())).containsExactly(ids.get(3));
        assertThat(ids(get("/api/tasks?key=k-" + run + "-1").body())).containsExactly(ids.get(1));
        assertThat(ids(get("/api/tasks?id=" + ids.get(2)).body())).containsExactly(ids.get(2));
        assertThat(ids(get("/api/tasks?queue=" + queue + "&payloadPath=operator&payloadValue=op1")
                        .body()))
                .containsExactly(ids.get(3), ids.get(1));
        assertThat(ids(get("/api/tasks?queue=" + queue + "&payloadPath=orderId&payloadValue=4&status=pending")
                        .body()))
                .containsExactly(ids.get(4));
        String future = Instant.now().plus(Duration.ofHours(2)).toString();
        String past = Instant.now().minus(Duration.ofHours(2)).toString();
        assertThat(ids(get("/api/tasks?queue=" + queue + "&createdFrom=" + future)
                        .body()))
                .isEmpty();
        assertThat(ids(get("/api/tasks?queue=" + queue + "&createdFrom=" + past + "&createdTo=" + future)
                        .body()))
                .containsExactlyElementsOf(newestFirst);
        assertThat(ids(get("/api/tasks?queue=" + queue + "&before=" + ids.get(2))
                        .body()))
                .containsExactly(ids.get(1), ids.get(0));
    }

    @Test
    void badSearchParametersAre400NamingTheParameter() {
        assertProblem(get("/api/tasks?id=abc"), 400, "'id' must be a task id");
        assertProblem(get("/api/tasks?before=-1"), 400, "'before' must be");
        assertProblem(get("/api/tasks?payloadPath=a%20b&payloadValue=1"), 400, "'payloadPath' must be dotted");
        assertProblem(get("/api/tasks?payloadPath=order.id"), 400, "give both or neither");
        assertProblem(get("/api/tasks?createdFrom=yesterday"), 400, "'createdFrom' must be a time");
        assertProblem(get("/api/tasks?createdTo=2026-13-01T00:00"), 400, "'createdTo' must be a time");
        assertProblem(get("/api/tasks?paging=sideways"), 400, "'paging' must be");
        assertProblem(get("/api/tasks?reference=x&page=1"), 400, "'page' is for offset paging");
        assertProblem(get("/api/tasks?paging=offset&key=x"), 400, "cannot be combined");
    }

    // --- operations ------------------------------------------------------------------------------

    @Test
    void cancellingASucceededTaskIs409() {
        long id = post("/api/tasks", "{\"kind\":\"order.no-param\"}")
                .body()
                .path("id")
                .asLong();
        awaitStatus(id, "SUCCEEDED");
        Response r = post("/api/tasks/" + id + "/cancel", null);
        assertProblem(r, 409, "SUCCEEDED");
        assertThat(r.body().path("taskStatus").asString()).isEqualTo("SUCCEEDED");
        assertProblem(post("/api/tasks/" + id + "/retry", null), 409, "SUCCEEDED");
    }

    @Test
    void pendingTaskIsCancelledAndRetried() {
        long id = post("/api/tasks", "{\"kind\":\"order.no-param\",\"queue\":\"idle-" + run + "\"}")
                .body()
                .path("id")
                .asLong();
        Response cancelled = post("/api/tasks/" + id + "/cancel", null);
        assertThat(cancelled.status()).isEqualTo(200);
        assertThat(cancelled.body().path("status").asString()).isEqualTo("CANCELLED");
        assertProblem(post("/api/tasks/" + id + "/cancel", null), 409, "CANCELLED");

        Response retried = post("/api/tasks/" + id + "/retry", null);
        assertThat(retried.status()).isEqualTo(200);
        assertThat(retried.body().path("status").asString()).isEqualTo("PENDING");
    }

    @Test
    void flakyTaskFailsTwiceThenSucceeds() {
        Response r = post("/api/tasks", "{\"kind\":\"demo.flaky\",\"payload\":{\"failTimes\":2},\"maxAttempts\":3}");
        assertThat(r.status()).isEqualTo(201);
        long id = r.body().path("id").asLong();
        JsonNode task = awaitStatus(id, "SUCCEEDED");
        assertThat(task.path("attempt").asInt()).isEqualTo(3);
        JsonNode attempts = get("/api/tasks/" + id + "/attempts").body();
        assertThat(outcomes(attempts)).containsExactly("FAILED", "FAILED", "SUCCEEDED");
        assertThat(attempts.get(0).path("attempt").asInt()).isEqualTo(1);
        assertThat(attempts.get(0).path("errorClass").asString()).isEqualTo("java.lang.IllegalStateException");
        assertThat(attempts.get(0).path("errorMessage").asString()).contains("on purpose");
        assertThat(attempts.get(2).path("errorClass").isNull()).isTrue();
    }

    @Test
    void flakyTaskOutOfAttemptsFailsAndCanBeRetriedWithMoreAttempts() {
        long id = post("/api/tasks", "{\"kind\":\"demo.flaky\",\"payload\":{\"failTimes\":3},\"maxAttempts\":2}")
                .body()
                .path("id")
                .asLong();
        JsonNode failed = awaitStatus(id, "FAILED");
        assertThat(failed.path("lastError").asString()).contains("on purpose");
        assertThat(outcomes(get("/api/tasks/" + id + "/attempts").body())).containsExactly("FAILED", "FAILED");

        Response retried = post("/api/tasks/" + id + "/retry?additionalAttempts=2", null);
        assertThat(retried.status()).isEqualTo(200);
        awaitStatus(id, "SUCCEEDED");
        assertThat(outcomes(get("/api/tasks/" + id + "/attempts").body()))
                .containsExactly("FAILED", "FAILED", "FAILED", "SUCCEEDED");
    }

    @Test
    void runNowByKeyRunsAFutureTask() {
        String key = "later-" + run;
        Response r = post(
                "/api/tasks",
                "{\"kind\":\"order.no-param\",\"idempotencyKey\":\"" + key + "\",\"runAt\":\""
                        + Instant.now().plus(Duration.ofHours(1)) + "\"}");
        long id = r.body().path("id").asLong();
        assertThat(get("/api/tasks/" + id).body().path("status").asString()).isEqualTo("PENDING");

        Response ran = post("/api/tasks/run?key=" + key, null);
        assertThat(ran.status()).isEqualTo(200);
        assertThat(ran.body().path("id").asLong()).isEqualTo(id);
        awaitStatus(id, "SUCCEEDED");
        assertProblem(post("/api/tasks/run?key=" + key, null), 409, "SUCCEEDED");
    }

    @Test
    void statsCountTasksByStatusAndAttemptsByOutcome() {
        String queue = "stats-" + run;
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ids.add(post("/api/tasks", "{\"kind\":\"order.no-param\",\"queue\":\"" + queue + "\"}")
                    .body()
                    .path("id")
                    .asLong());
        }
        post("/api/tasks/" + ids.get(0) + "/cancel", null);
        long flaky = post("/api/tasks", "{\"kind\":\"demo.flaky\",\"payload\":{\"failTimes\":1}}")
                .body()
                .path("id")
                .asLong();
        awaitStatus(flaky, "SUCCEEDED");

        Response r = get("/api/stats");
        assertThat(r.status()).isEqualTo(200);
        JsonNode stats = r.body();
        assertThat(names(stats.path("tasks")))
                .containsExactly("WAITING", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED");
        assertThat(names(stats.path("attempts")))
                .containsExactly("SUCCEEDED", "FAILED", "TIMED_OUT", "LEASE_EXPIRED", "CANCELLED");
        assertThat(stats.path("tasks").path("PENDING").asLong()).isGreaterThanOrEqualTo(2);
        assertThat(stats.path("tasks").path("SUCCEEDED").asLong()).isGreaterThanOrEqualTo(1);
        assertThat(stats.path("attempts").path("FAILED").asLong()).isGreaterThanOrEqualTo(1);

        JsonNode mine = stats.path("queues").path(queue);
        assertThat(mine.path("tasks").path("PENDING").asLong()).isEqualTo(2);
        assertThat(mine.path("tasks").path("CANCELLED").asLong()).isEqualTo(1);
        assertThat(mine.path("tasks").path("SUCCEEDED").asLong()).isZero();
        assertThat(mine.path("attempts").path("SUCCEEDED").asLong()).isZero();
        JsonNode defaults = stats.path("queues").path("default");
        assertThat(defaults.path("tasks").path("SUCCEEDED").asLong()).isGreaterThanOrEqualTo(1);
        assertThat(defaults.path("attempts").path("FAILED").asLong()).isGreaterThanOrEqualTo(1);
    }

    // --- helpers ---------------------------------------------------------------------------------

    // --- README examples: task DELETE, schedules, a batch without params ----------------------------

    @Test
    void adminDeletesATaskThatIsNotRunningAndAnOperatorMayNot() {
        Response created = post(
                "/api/tasks",
                "{\"kind\":\"order.sync\",\"payload\":{\"orderId\":5,\"operator\":\"ann\"},\"queue\":\"idle-" + run
                        + "\"}");
        assertThat(created.status()).isEqualTo(201);
        long id = created.body().path("id").asLong();
        int asOperator = client.delete()
                .uri("/api/tasks/" + id)
                .headers(h -> h.setBasicAuth("operator", "operator-secret"))
                .exchange()
                .returnResult(String.class)
                .getStatus()
                .value();
        assertThat(asOperator).isEqualTo(403);
        Response deleted =
                response(client.delete().uri("/api/tasks/" + id).exchange().returnResult(String.class));
        assertThat(deleted.status()).isEqualTo(200);
        assertThat(deleted.body().path("id").asLong()).isEqualTo(id);
        assertThat(get("/api/tasks/" + id).status()).isEqualTo(404);
        Response again =
                response(client.delete().uri("/api/tasks/" + id).exchange().returnResult(String.class));
        assertThat(again.status()).isEqualTo(404);
        assertThat(again.contentType()).isEqualTo(PROBLEM);
    }

    @Test
    void schedulesAreListedWithTheirTriggerAndNextSlot() {
        // The seed job no_param_job has a cron, so it has a schedule.
        await().atMost(WAIT).until(() -> scheduleNames().stream().anyMatch(n -> n.startsWith("dbtasks.job:")));
        Response page = get("/api/schedules?size=500");
        assertThat(page.status()).isEqualTo(200);
        JsonNode cron = null;
        for (JsonNode s : page.body().path("items")) {
            if (s.path("name").asString().startsWith("dbtasks.job:")) {
                cron = s;
            }
        }
        assertThat(cron).isNotNull();
        assertThat(cron.path("trigger").asString()).isEqualTo("CRON");
        assertThat(cron.path("cron").asString()).isEqualTo("0 * * * * *");
        assertThat(cron.path("kind").asString()).isEqualTo("dbtasks.job.cron");
        assertThat(page.body().path("total").asLong()).isGreaterThanOrEqualTo(1);
        assertThat(get("/api/schedules?size=0").status()).isEqualTo(400);
    }

    private List<String> scheduleNames() {
        List<String> names = new java.util.ArrayList<>();
        get("/api/schedules?size=500")
                .body()
                .path("items")
                .forEach(s -> names.add(s.path("name").asString()));
        return names;
    }

    @Test
    void aDemoBatchWithoutParamsRunsEveryChunk() {
        Response created = post(
                "/api/batches", "{\"kind\":\"orders.sync\",\"chunks\":3,\"idempotencyKey\":\"no-params-" + run + "\"}");
        assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
        long id = created.body().path("id").asLong();
        await().atMost(WAIT)
                .until(() -> get("/api/batches/" + id).body().path("finished").asBoolean());
        JsonNode batch = get("/api/batches/" + id).body();
        assertThat(batch.path("failed").asInt()).as(batch.toString()).isZero();
        assertThat(batch.path("done").asInt()).isEqualTo(3);
    }

    private Response get(String uri) {
        return response(client.get().uri(uri).exchange().returnResult(String.class));
    }

    private Response put(String uri, String json) {
        return response(client.put()
                .uri(uri)
                .contentType(MediaType.APPLICATION_JSON)
                .body(json)
                .exchange()
                .returnResult(String.class));
    }

    private Response delete(String uri) {
        return response(client.delete().uri(uri).exchange().returnResult(String.class));
    }

    private Response post(String uri, String json) {
        RestTestClient.RequestBodySpec spec = client.post().uri(uri);
        if (json != null) {
            spec.contentType(MediaType.APPLICATION_JSON).body(json);
        }
        return response(spec.exchange().returnResult(String.class));
    }

    private Response response(EntityExchangeResult<String> result) {
        String body = result.getResponseBody();
        return new Response(
                result.getStatus().value(),
                result.getResponseHeaders(),
                body == null || body.isEmpty() ? mapper.nullNode() : mapper.readTree(body));
    }

    private JsonNode byKey(String key) {
        return get("/api/tasks/by-key/" + key).body();
    }

    private JsonNode awaitStatus(long id, String status) {
        await().atMost(WAIT)
                .until(() -> status.equals(
                        get("/api/tasks/" + id).body().path("status").asString()));
        return get("/api/tasks/" + id).body();
    }

    private JsonNode json(String text) {
        return mapper.readTree(text);
    }

    private static void assertProblem(Response r, int status, String detailFragment) {
        assertThat(r.status()).as("status of %s", r.body()).isEqualTo(status);
        assertThat(r.contentType()).as("content type").isNotNull();
        assertThat(r.contentType().isCompatibleWith(PROBLEM))
                .as("content type %s", r.contentType())
                .isTrue();
        assertThat(r.body().path("status").asInt()).isEqualTo(status);
        assertThat(r.detail()).contains(detailFragment);
    }

    private static List<String> outcomes(JsonNode attempts) {
        List<String> out = new ArrayList<>();
        attempts.forEach(a -> out.add(a.path("outcome").asString()));
        return out;
    }

    private static List<Long> ids(JsonNode page) {
        List<Long> out = new ArrayList<>();
        page.path("items").forEach(t -> out.add(t.path("id").asLong()));
        return out;
    }

    private static List<String> names(JsonNode object) {
        List<String> out = new ArrayList<>();
        object.propertyNames().forEach(out::add);
        return out;
    }
}
