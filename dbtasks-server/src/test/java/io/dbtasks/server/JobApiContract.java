package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.server.demo.DemoOrderBatch;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
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
 * The job definition and batch API, once per database: CRUD by code, runs by code, business type,
 * codes and failures, the allow-list, the demo batch over 1,000 orders, and problem+json errors.
 * Each test uses a business type and queue of its own.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.poll-interval=50ms",
            "dbtasks.rescue-interval=1s",
            "dbtasks.shutdown-timeout=2s",
            "dbtasks.unclaimable-grace=1s"
        })
@TestPropertySource(locations = "classpath:test-users.properties")
@AutoConfigureRestTestClient
abstract class JobApiContract {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Autowired
    RestTestClient client;

    @Autowired
    JsonMapper mapper;

    @Autowired
    DataSource dataSource;

    @Autowired
    io.dbtasks.DbTasks dbTasks;

    private final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void authenticate() {
        // Definitions are admin's (the security rules), so the API is driven as admin.
        client = client.mutate()
                .defaultHeaders(h -> h.setBasicAuth("admin", "admin-secret"))
                .build();
    }

    record Response(int status, HttpHeaders headers, JsonNode body) {
        String detail() {
            return body.path("detail").asString();
        }
    }

    private String syncJob(String code, String businessType, String queue) {
        return "{\"code\":\"" + code + "\",\"name\":\"Sync " + code + "\",\"businessType\":\"" + businessType
                + "\",\"businessId\":\"ORDER-1\",\"bean\":\"orderService\",\"method\":\"syncOrder\","
                + "\"parameterTypes\":[\"java.lang.Long\",\"java.lang.String\"],\"arguments\":[1,\"api\"],"
                + "\"maxAttempts\":2,\"retryDelayMillis\":100"
                + (queue == null ? "" : ",\"queue\":\"" + queue + "\"") + "}";
    }

    @Test
    void definitionsAreCreatedReadUpdatedAndDeletedByCode() {
        String code = "crud-" + run;
        Response created = post("/api/jobs", syncJob(code, "crud-" + run, null));
        assertThat(created.status()).isEqualTo(201);
        assertThat(created.headers().getLocation().getPath()).isEqualTo("/api/jobs/" + code);
        assertThat(created.body().path("arguments")).isEqualTo(mapper.readTree("[1,\"api\"]"));
        assertThat(created.body().path("enabled").asBoolean()).isTrue();
        assertThat(created.body().path("runs").asLong()).isZero();
        assertProblem(post("/api/jobs", syncJob(code, "x", null)), 409, "exists already");

        assertThat(get("/api/jobs/" + code).body()).isEqualTo(created.body());
        Response updated = put(
                "/api/jobs/" + code,
                syncJob(code, "crud-" + run, null).replace("\"maxAttempts\":2", "\"maxAttempts\":5,\"enabled\":false"));
        assertThat(updated.status()).isEqualTo(200);
        assertThat(updated.body().path("maxAttempts").asInt()).isEqualTo(5);
        assertThat(updated.body().path("enabled").asBoolean()).isFalse();
        assertProblem(post("/api/jobs/" + code + "/runs", null), 409, "is disabled");
        assertProblem(put("/api/jobs/" + code, syncJob("other", "x", null)), 400, "differs from the path");

        assertThat(delete("/api/jobs/" + code).status()).isEqualTo(204);
        assertProblem(get("/api/jobs/" + code), 404, "No job definition has code '" + code + "'");
        assertProblem(delete("/api/jobs/" + code), 404, "No job definition");
    }

    @Test
    void invalidDefinitionsAndRunRequestsAre400() {
        assertProblem(post("/api/jobs", "{\"businessType\":\"t\",\"bean\":\"b\",\"method\":\"m\"}"), 400, "'code'");
        assertProblem(
                post("/api/jobs", "{\"code\":\"c-" + run + "\",\"bean\":\"b\",\"method\":\"m\"}"),
                400,
                "'businessType'");
        assertProblem(
                post("/api/jobs", syncJob("c-" + run, "t", null).replace("[1,\"api\"]", "{\"orderId\":1}")),
                400,
                "'arguments' must be a JSON array");
        assertProblem(post("/api/jobs", "{\"code\": "), 400, "not valid JSON");
        assertProblem(
                post("/api/jobs", syncJob("c-" + run, "t", null).replace("\"maxAttempts\":2", "\"maxAttempts\":0")),
                400,
                "maxAttempts");
        assertProblem(
                post("/api/jobs", syncJob("c-" + run, "t", null).replace("}", ",\"timeZone\":\"Mars/Olympus\"}")),
                400,
                "timeZone");
        assertProblem(get("/api/jobs?limit=0"), 400, "'limit'");
        assertProblem(post("/api/job-runs", "{}"), 400, "exactly one of");
        assertProblem(post("/api/job-runs", "{\"businessType\":\"a\",\"codes\":[\"b\"]}"), 400, "exactly one of");
        assertProblem(post("/api/job-runs", "{\"codes\":[]}"), 400, "'codes'");
        assertProblem(post("/api/jobs/none-" + run + "/runs", null), 404, "No job definition");
        assertProblem(post("/api/batches", "{\"kind\":\"nope\",\"chunks\":2}"), 400, "orders.sync");
        assertProblem(post("/api/batches", "{\"kind\":\"orders.sync\"}"), 400, "'chunks'");
        assertProblem(post("/api/batches", "{\"kind\":\"orders.sync\",\"chunks\":0}"), 400, "chunks must be 1 to");
        assertProblem(get("/api/batches/987654321"), 404, "No batch has id 987654321");
    }

    @Test
    void runByCodeEnqueuesOneTaskAndAPendingRunIsNotDuplicated() {
        String code = "idle-" + run;
        post("/api/jobs", syncJob(code, "idle-" + run, "idle-" + run)); // a queue no worker serves
        Response first = post("/api/jobs/" + code + "/runs", null);
        assertThat(first.status()).isEqualTo(202);
        assertThat(first.body().path("duplicate").asBoolean()).isFalse();
        assertThat(first.body().path("runNo").asLong()).isEqualTo(1);
        Response second = post("/api/jobs/" + code + "/runs", null);
        assertThat(second.status()).isEqualTo(200);
        assertThat(second.body().path("duplicate").asBoolean()).isTrue();
        assertThat(second.body().path("taskId").asLong())
                .isEqualTo(first.body().path("taskId").asLong());
        JsonNode task =
                get("/api/tasks/" + first.body().path("taskId").asLong()).body();
        assertThat(task.path("kind").asString()).isEqualTo("dbtasks.job");
        assertThat(task.path("status").asString()).isEqualTo("PENDING");
        assertThat(task.path("name").asString()).isEqualTo(code);
    }

    @Test
    void runsByBusinessTypeAndCodesAndFailuresGoThroughTheAllowList() {
        String type = "bulk-" + run;
        for (int i = 0; i < 3; i++) {
            assertThat(post("/api/jobs", syncJob("bulk-" + run + "-" + i, type, null))
                            .status())
                    .isEqualTo(201);
        }
        // Not allow-listed: a real public method of the bean, but not annotated @TaskMethod.
        String unlisted = "{\"code\":\"unlisted-" + run + "\",\"businessType\":\"" + type
                + "\",\"bean\":\"orderService\",\"method\":\"toString\",\"maxAttempts\":1}";
        assertThat(post("/api/jobs", unlisted).status()).isEqualTo(201);

        Response byType = post("/api/job-runs", "{\"businessType\":\"" + type + "\"}");
        assertThat(byType.status()).isEqualTo(202);
        assertThat(byType.body().path("enqueued").asInt()).isEqualTo(4);
        for (int i = 0; i < 3; i++) {
            String code = "bulk-" + run + "-" + i;
            await().atMost(WAIT)
                    .until(() -> "SUCCEEDED"
                            .equals(get("/api/jobs/" + code)
                                    .body()
                                    .path("lastStatus")
                                    .asString()));
        }
        await().atMost(WAIT)
                .until(() -> "FAILED"
                        .equals(get("/api/jobs/unlisted-" + run)
                                .body()
                                .path("lastStatus")
                                .asString()));
        // No engine allow-lists it, so none claimed it: it failed after the grace with the reason.
        assertThat(get("/api/jobs/unlisted-" + run).body().path("lastError").asString())
                .contains("can run job target orderService.toString()")
                .contains("@TaskMethod");

        // Every definition has a final last run: succeeded ones are not run again unless asked.
        Response again = post("/api/job-runs", "{\"businessType\":\"" + type + "\"}");
        assertThat(again.status()).isEqualTo(202);
        assertThat(again.body().path("enqueued").asInt()).isEqualTo(1); // the failed one
        assertThat(again.body().path("alreadySucceeded").asInt()).isEqualTo(3);
        await().atMost(WAIT)
                .until(() ->
                        get("/api/jobs/unlisted-" + run).body().path("runs").asLong() == 2
                                && "FAILED"
                                        .equals(get("/api/jobs/unlisted-" + run)
                                                .body()
                                                .path("lastStatus")
                                                .asString()));
        Response single = post("/api/jobs/bulk-" + run + "-1/runs", null);
        assertThat(single.status()).isEqualTo(200);
        assertThat(single.body().path("alreadySucceeded").asBoolean()).isTrue();
        Response skipped = post("/api/job-runs", "{\"codes\":[\"bulk-" + run + "-0\"]}");
        assertThat(skipped.body().path("enqueued").asInt()).isZero();
        assertThat(skipped.body().path("alreadySucceeded").asInt()).isEqualTo(1);
        Response byCodes = post(
                "/api/job-runs",
                "{\"codes\":[\"bulk-" + run + "-0\",\"bulk-" + run + "-2\",\"missing-" + run
                        + "\"],\"rerunSucceeded\":true}");
        assertThat(byCodes.body().path("enqueued").asInt()).isEqualTo(2);
        assertThat(byCodes.body().path("notFound")).isEqualTo(mapper.readTree("[\"missing-" + run + "\"]"));
        await().atMost(WAIT)
                .until(() ->
                        get("/api/jobs/bulk-" + run + "-2").body().path("runs").asLong() == 2
                                && "SUCCEEDED"
                                        .equals(get("/api/jobs/bulk-" + run + "-2")
                                                .body()
                                                .path("lastStatus")
                                                .asString()));

        Response rerun = post("/api/job-runs", "{\"failed\":true,\"businessType\":\"" + type + "\"}");
        assertThat(rerun.body().path("enqueued").asInt()).isEqualTo(1);
        await().atMost(WAIT)
                .until(() ->
                        get("/api/jobs/unlisted-" + run).body().path("runs").asLong() == 3
                                && "FAILED"
                                        .equals(get("/api/jobs/unlisted-" + run)
                                                .body()
                                                .path("lastStatus")
                                                .asString()));

        JsonNode page = get("/api/jobs?businessType=" + type + "&limit=3").body();
        assertThat(page.path("items").size()).isEqualTo(3);
        long after = page.path("nextAfter").asLong();
        JsonNode last = get("/api/jobs?businessType=" + type + "&limit=3&after=" + after)
                .body();
        assertThat(last.path("items").size()).isEqualTo(1);
        assertThat(last.path("nextAfter").isNull()).isTrue();
    }

    @Test
    void aViewerPagesADefinitionsRunsNewestFirstWithOutcomeDurationAndRetries() {
        String code = "log-" + run;
        post("/api/jobs", syncJob(code, "log-" + run, null));
        for (int i = 1; i <= 2; i++) {
            assertThat(post("/api/jobs/" + code + "/runs?rerunSucceeded=true", null)
                            .body()
                            .path("runNo")
                            .asLong())
                    .isEqualTo(i);
            await().atMost(WAIT)
                    .until(() -> "SUCCEEDED"
                            .equals(get("/api/jobs/" + code)
                                    .body()
                                    .path("lastStatus")
                                    .asString()));
        }
        client = client.mutate()
                .defaultHeaders(h -> h.setBasicAuth("viewer", "viewer-secret"))
                .build();

        Response newest = get("/api/jobs/" + code + "/runs?limit=1");
        assertThat(newest.status()).as(newest.body().toString()).isEqualTo(200);
        assertThat(newest.body().path("items")).hasSize(1);
        JsonNode second = newest.body().path("items").get(0);
        assertThat(second.path("runNo").asLong()).isEqualTo(2);
        assertThat(second.path("taskId").asLong())
                .isEqualTo(get("/api/jobs/" + code).body().path("lastTaskId").asLong());
        assertThat(second.path("outcome").asString()).isEqualTo("SUCCEEDED");
        assertThat(second.path("retries").asInt()).isZero();
        assertThat(second.path("durationMillis").isNumber()).isTrue();
        assertThat(second.path("startedAt").isString()).isTrue();
        assertThat(second.path("finishedAt").isString()).isTrue();
        assertThat(second.path("error").isNull()).isTrue();
        assertThat(newest.body().path("nextBefore").asLong()).isEqualTo(2);

        JsonNode older = get("/api/jobs/" + code + "/runs?limit=1&before=2").body();
        assertThat(older.path("items").get(0).path("runNo").asLong()).isEqualTo(1);
        assertThat(older.path("nextBefore").isNull()).isTrue();

        assertThat(get("/v3/api-docs")
                        .body()
                        .path("paths")
                        .path("/api/jobs/{code}/runs")
                        .path("get")
                        .path("summary")
                        .asString())
                .contains("newest first");
        assertProblem(get("/api/jobs/no-such-" + run + "/runs"), 404, "no-such-" + run);
        assertProblem(get("/api/jobs/" + code + "/runs?limit=0"), 400, "'limit'");
    }

    @Test
    void theSeedJobWithACronHasAnEveryMinuteSchedule() {
        await().atMost(WAIT).until(() -> get("/api/jobs/no_param_job").status() == 200);
        JsonNode job = get("/api/jobs/no_param_job").body();
        assertThat(job.path("cron").asString()).isEqualTo("0 * * * * *");
        var schedule = dbTasks.schedules()
                .find(io.dbtasks.job.JobDefinitions.SCHEDULE_PREFIX
                        + job.path("id").asLong())
                .orElseThrow();
        assertThat(schedule.kind()).isEqualTo(io.dbtasks.job.JobDefinitions.CRON_KIND);
        assertThat(schedule.paused()).isFalse();
        assertThat(schedule.nextSlot().getEpochSecond() % 60).isZero();
        assertThat(schedule.nextSlot()).isBefore(java.time.Instant.now().plusSeconds(61));
    }

    /** A method another application's engine allow-lists; never called here. */
    public static final class ShopTargets {
        public void ship(String order) {}
    }

    @Test
    void theAllowListAddsTheTargetsOfTheOtherLiveEnginesOfTheDatabase() {
        DbTasks shop = DbTasks.builder(dataSource)
                .workerId("shop-app")
                .queue("shop", 1)
                .jobTargets(new io.dbtasks.job.JobMethodRegistry()
                        .register("shopTargets", new ShopTargets(), "ship", String.class))
                .build();
        try {
            shop.start();
            await().atMost(WAIT)
                    .until(() -> get("/api/job-targets").body().toString().contains("shopTargets.ship"));
            assertThat(get("/api/job-targets?queue=shop").body())
                    .isEqualTo(mapper.readTree("[\"shopTargets.ship(java.lang.String)\"]"));
            assertThat(get("/api/job-targets").body().toString())
                    .contains("shopTargets.ship(java.lang.String)", "orderService.noParamTask()");
            assertThat(get("/api/job-targets?queue=default").body().toString())
                    .doesNotContain("shopTargets")
                    .contains("orderService.noParamTask()");
        } finally {
            shop.stop(Duration.ofSeconds(5));
        }
        await().atMost(WAIT)
                .until(() -> !get("/api/job-targets").body().toString().contains("shopTargets"));
    }

    @Test
    void theAllowListShowsTheOrderServiceMethods() {
        assertThat(get("/api/job-targets").body())
                .isEqualTo(mapper.readTree("[\"orderService.createOrder(io.dbtasks.server.demo.OrderDto)\","
                        + "\"orderService.noParamTask()\","
                        + "\"orderService.syncOrder(java.lang.Long, java.lang.String)\"]"));
    }

    @Test
    void theDemoBatchSynchronisesTheThousandSampleOrdersOnceAndBatchesCanBeCreated() throws Exception {
        Response demo = post(
                "/api/batches",
                "{\"kind\":\"orders.sync\",\"chunks\":10,\"idempotencyKey\":\"" + DemoOrderBatch.BATCH_KEY + "\"}");
        assertThat(demo.status()).isEqualTo(200); // created at startup: this finds it
        long id = demo.body().path("id").asLong();
        await().atMost(WAIT)
                .until(() -> get("/api/batches/" + id).body().path("finished").asBoolean());
        JsonNode done = get("/api/batches/" + id).body();
        assertThat(done.path("done").asInt()).isEqualTo(10);
        assertThat(done.path("failed").asInt()).isZero();
        assertThat(done.path("params")).isEqualTo(mapper.readTree("{\"ordersPerChunk\":100}"));
        try (var c = dataSource.getConnection();
                var s = c.createStatement();
                var rs = s.executeQuery(
                        "SELECT COUNT(*), COUNT(DISTINCT synced_chunk) FROM demo_order" + " WHERE status = 'SYNCED'")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(1000);
            assertThat(rs.getInt(2)).isEqualTo(10);
        }

        String body = "{\"kind\":\"orders.sync\",\"chunks\":2,\"params\":{\"ordersPerChunk\":1},\"name\":\"again\","
                + "\"idempotencyKey\":\"api-" + run + "\"}";
        Response created = post("/api/batches", body);
        assertThat(created.status()).isEqualTo(201);
        assertThat(created.headers().getLocation().getPath())
                .isEqualTo("/api/batches/" + created.body().path("id").asLong());
        assertThat(created.body().path("chunks").asInt()).isEqualTo(2);
        Response again = post("/api/batches", body);
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.body().path("id").asLong())
                .isEqualTo(created.body().path("id").asLong());
        await().atMost(WAIT)
                .until(() -> get("/api/batches/" + created.body().path("id").asLong())
                                .body()
                                .path("done")
                                .asInt()
                        == 2);
    }

    // --- helpers ---------------------------------------------------------------------------------

    private Response get(String uri) {
        return response(client.get().uri(uri).exchange().returnResult(String.class));
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

    private Response put(String uri, String json) {
        return response(client.put()
                .uri(uri)
                .contentType(MediaType.APPLICATION_JSON)
                .body(json)
                .exchange()
                .returnResult(String.class));
    }

    private Response response(EntityExchangeResult<String> result) {
        String body = result.getResponseBody();
        return new Response(
                result.getStatus().value(),
                result.getResponseHeaders(),
                body == null || body.isEmpty() ? mapper.nullNode() : mapper.readTree(body));
    }

    private static void assertProblem(Response r, int status, String detailFragment) {
        assertThat(r.status()).as("status of %s", r.body()).isEqualTo(status);
        assertThat(r.headers().getContentType()).as("content type").isNotNull();
        assertThat(r.headers().getContentType().isCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
                .as("content type %s", r.headers().getContentType())
                .isTrue();
        assertThat(r.body().path("status").asInt()).isEqualTo(status);
        assertThat(r.detail()).contains(detailFragment);
    }
}
