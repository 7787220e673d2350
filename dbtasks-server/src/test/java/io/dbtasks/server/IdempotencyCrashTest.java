package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.server.process.ServerProcess;
import io.dbtasks.testing.TestDatabase;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A server killed with SIGKILL while two keyed {@code POST /api/tasks} run: one after its task was
 * enqueued, one before. After a restart, repeating each request with its key must not answer 409 for
 * the record the dead server left IN_FLIGHT: once that record's lease has passed, the first repeat
 * answers with the task the dead server created (the same id, no second task), the second enqueues
 * its task once.
 */
class IdempotencyCrashTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    @Test
    void onH2() throws Exception {
        crashMidRequestThenRepeat();
    }

    @Test
    void onPostgres() throws Exception {
        crashMidRequestThenRepeat("--spring.datasource.url=" + ServerTestDatabase.prepare(TestDatabase.POSTGRESQL));
    }

    @Test
    void onMariaDb() throws Exception {
        crashMidRequestThenRepeat("--spring.datasource.url=" + ServerTestDatabase.prepare(TestDatabase.MARIADB));
    }

    private void crashMidRequestThenRepeat(String... database) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--dbtasks.test.hold-responses=true",
                "--dbtasks.server.seed-demo-jobs=false",
                "--dbtasks.server.idempotency.lease=3s",
                "--spring.datasource.hikari.maximum-pool-size=4"));
        args.addAll(List.of(database));
        String run = UUID.randomUUID().toString();
        String createdKey = "crash-after-" + run;
        String pendingKey = "crash-before-" + run;
        String createdBody = body(run + "-a");
        String pendingBody = body(run + "-b");
        long createdId;
        try (ServerProcess server = ServerProcess.start(dir, "first", args.toArray(String[]::new))) {
            CompletableFuture.runAsync(
                    () -> post(server, pendingBody, "Idempotency-Key", pendingKey, "X-Test-Hold-Before", "600000"));
            CompletableFuture.runAsync(
                    () -> post(server, createdBody, "Idempotency-Key", createdKey, "X-Test-Hold-After", "600000"));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            Long found = null;
            while (found == null && System.nanoTime() < deadline) {
                Thread.sleep(100);
                found = taskNamed(server, run + "-a");
            }
            assertThat(found).as("the first request's task was enqueued").isNotNull();
            createdId = found;
            Thread.sleep(1000); // the held-before request has claimed its key long since
            assertThat(taskNamed(server, run + "-b")).isNull();
            server.kill();
        }

        try (ServerProcess server = ServerProcess.start(dir, "second", args.toArray(String[]::new))) {
            HttpResponse<String> created = repeatUntilNot409(server, createdBody, createdKey);
            assertThat(created.statusCode()).as(created.body()).isIn(200, 201);
            assertThat(JSON.readTree(created.body()).get("id").asLong())
                    .as("the repeat answers with the task the dead server created")
                    .isEqualTo(createdId);
            HttpResponse<String> pending = repeatUntilNot409(server, pendingBody, pendingKey);
            assertThat(pending.statusCode()).as(pending.body()).isEqualTo(201);
            long pendingId = JSON.readTree(pending.body()).get("id").asLong();
            assertThat(taskNamed(server, run + "-b")).isEqualTo(pendingId);
            HttpResponse<String> replay = server.post("/api/tasks", pendingBody, "Idempotency-Key", pendingKey);
            assertThat(replay.statusCode()).isEqualTo(201);
            assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
            assertThat(tasksNamed(server, run)).as("one task per request").hasSize(2);
        }
    }

    private static String body(String name) {
        return "{\"kind\":\"order.create\",\"name\":\"" + name
                + "\",\"payload\":{\"orderId\":7,\"userName\":\"Ann\",\"amount\":12.5}}";
    }

    private static void post(ServerProcess server, String body, String... headers) {
        try {
            server.post("/api/tasks", body, headers);
        } catch (Exception e) {
            // the server was killed: no answer is expected
        }
    }

    private static HttpResponse<String> repeatUntilNot409(ServerProcess server, String body, String key)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        HttpResponse<String> r = server.post("/api/tasks", body, "Idempotency-Key", key);
        while (r.statusCode() == 409 && System.nanoTime() < deadline) {
            Thread.sleep(500);
            r = server.post("/api/tasks", body, "Idempotency-Key", key);
        }
        return r;
    }

    private static Long taskNamed(ServerProcess server, String name) throws Exception {
        List<Long> ids = tasksNamed(server, name);
        assertThat(ids).hasSizeLessThanOrEqualTo(1);
        return ids.isEmpty() ? null : ids.get(0);
    }

    private static List<Long> tasksNamed(ServerProcess server, String prefix) throws Exception {
        HttpResponse<String> r = server.get("/api/tasks?kind=order.create&size=100");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        List<Long> ids = new ArrayList<>();
        for (JsonNode t : JSON.readTree(r.body()).get("items")) {
            if (t.path("name").asString("").startsWith(prefix)) {
                ids.add(t.get("id").asLong());
            }
        }
        return ids;
    }
}
