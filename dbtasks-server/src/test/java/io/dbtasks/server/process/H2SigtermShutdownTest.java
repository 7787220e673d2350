package io.dbtasks.server.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A normal shutdown (SIGTERM) of the server on its default H2 URL, in a fresh working directory, in
 * the middle of a backlog of chunks that have one attempt each: the engine must settle or hand back
 * every task it holds before the database closes, so that after a restart the whole backlog ends done
 * with no task FAILED by an expired lease.
 */
class H2SigtermShutdownTest {
    private static final int CHUNKS = 3000;
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    @Test
    void sigtermMidBacklogHandsTasksBackAndFailsNone() throws Exception {
        // The URL the README names, without settings: the server must make it safe itself.
        String[] args = {
            "--spring.datasource.url=jdbc:h2:file:./data/dbtasks", "--dbtasks.lease=5s", "--dbtasks.queues.default=8"
        };
        long batch;
        String firstLog;
        try (ServerProcess server = ServerProcess.start(dir, "first", args)) {
            HttpResponse<String> created = server.post(
                    "/api/batches",
                    "{\"kind\":\"orders.sync\",\"chunks\":" + CHUNKS
                            + ",\"params\":{\"ordersPerChunk\":1},\"maxAttempts\":1}");
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            batch = JSON.readTree(created.body()).get("id").asLong();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (progress(server, batch).get("done").asInt() < 100 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            JsonNode before = progress(server, batch);
            assertThat(before.get("remaining").asInt())
                    .as("a backlog left at SIGTERM: %s", before)
                    .isGreaterThan(100);
            server.terminate(Duration.ofSeconds(60));
            firstLog = server.log();
        }
        try (ServerProcess server = ServerProcess.start(dir, "second", args)) {
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            JsonNode p = progress(server, batch);
            while (!p.get("finished").asBoolean() && System.nanoTime() < deadline) {
                Thread.sleep(250);
                p = progress(server, batch);
            }
            assertThat(p.get("finished").asBoolean())
                    .as("backlog finished after the restart: %s", p)
                    .isTrue();
            assertThat(p.get("failed").asInt()).as("chunks failed: %s", p).isZero();
            assertThat(p.get("done").asInt()).isEqualTo(CHUNKS);
            JsonNode failed =
                    JSON.readTree(server.get("/api/tasks?status=FAILED&size=5").body());
            assertThat(failed.get("total").asLong())
                    .as("FAILED tasks: %s", failed)
                    .isZero();
        }
        assertThat(firstLog).contains("stopped;").contains("handed back");
        assertThat(firstLog).doesNotContain("could not hand it back");
    }

    private static JsonNode progress(ServerProcess server, long batch) throws Exception {
        HttpResponse<String> r = server.get("/api/batches/" + batch);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }
}
