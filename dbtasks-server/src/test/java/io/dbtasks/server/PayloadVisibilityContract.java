package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * With {@code dbtasks.server.security.hide-payloads-from-viewers=true}, run once per database by the
 * subclasses: a viewer sees neither job definitions' arguments nor batches' parameters, in the API
 * (the field {@code null}, flagged {@code argumentsOmitted} / {@code paramsOmitted}) or on the
 * dashboard, while operators and admins see both.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.poll-interval=50ms",
            "dbtasks.server.security.hide-payloads-from-viewers=true",
            "dbtasks.server.seed-demo-jobs=false",
            "spring.datasource.hikari.maximum-pool-size=6"
        })
@TestPropertySource(locations = "classpath:test-users.properties")
@DirtiesContext
abstract class PayloadVisibilityContract {
    static final String ADMIN = RawHttp.basic("admin", "admin-secret");
    static final String OPERATOR = RawHttp.basic("operator", "operator-secret");
    static final String VIEWER = RawHttp.basic("viewer", "viewer-secret");

    @LocalServerPort
    int port;

    @Autowired
    JsonMapper mapper;

    RawHttp http;
    final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void client() {
        http = new RawHttp(port);
    }

    @Test
    void jobArgumentsAndBatchParamsAreHiddenFromViewers() {
        String secret = "secret-" + run;
        String code = "hidden-" + run;
        RawHttp.Response job = send(
                "POST",
                "/api/jobs",
                ADMIN,
                "{\"code\":\"" + code + "\",\"businessType\":\"hidden-" + run + "\",\"bean\":\"orderService\","
                        + "\"method\":\"syncOrder\",\"parameterTypes\":[\"java.lang.Long\",\"java.lang.String\"],"
                        + "\"arguments\":[1,\"" + secret + "\"],\"enabled\":false}");
        assertThat(job.status()).as(job.body()).isEqualTo(201);
        RawHttp.Response batch = send(
                "POST",
                "/api/batches",
                OPERATOR,
                "{\"kind\":\"orders.sync\",\"chunks\":1,\"params\":{\"ordersPerChunk\":1},\"idempotencyKey\":\"hidden-"
                        + run + "\"}");
        assertThat(batch.status()).as(batch.body()).isEqualTo(201);
        long batchId = json(batch).path("id").asLong();

        // A viewer: the fields are null and flagged, the secret appears nowhere.
        JsonNode one = json(send("GET", "/api/jobs/" + code, VIEWER, null));
        assertThat(one.path("arguments").isNull()).as("%s", one).isTrue();
        assertThat(one.path("argumentsOmitted").asBoolean()).as("%s", one).isTrue();
        JsonNode list = json(send("GET", "/api/jobs?businessType=hidden-" + run, VIEWER, null));
        assertThat(list.path("items").get(0).path("arguments").isNull())
                .as("%s", list)
                .isTrue();
        assertThat(list.path("items").get(0).path("argumentsOmitted").asBoolean())
                .as("%s", list)
                .isTrue();
        JsonNode b = json(send("GET", "/api/batches/" + batchId, VIEWER, null));
        assertThat(b.path("params").isNull()).as("%s", b).isTrue();
        assertThat(b.path("paramsOmitted").asBoolean()).as("%s", b).isTrue();
        for (String page : new String[] {
            "/api/jobs/" + code,
            "/api/jobs?businessType=hidden-" + run,
            "/api/batches/" + batchId,
            "/dashboard/definitions",
            "/dashboard/definitions/" + code,
            "/dashboard/batches"
        }) {
            RawHttp.Response r = send("GET", page, VIEWER, null);
            assertThat(r.status()).as("%s: %s", page, r.body()).isEqualTo(200);
            assertThat(r.body()).as("viewer's %s", page).doesNotContain(secret, "ordersPerChunk");
        }
        assertThat(send("GET", "/dashboard/definitions/" + code, VIEWER, null).body())
                .contains("id=\"arguments-hidden\"");

        // Operators and admins see them.
        for (String auth : new String[] {OPERATOR, ADMIN}) {
            JsonNode seen = json(send("GET", "/api/jobs/" + code, auth, null));
            assertThat(seen.path("arguments").get(1).asString()).isEqualTo(secret);
            assertThat(seen.path("argumentsOmitted").asBoolean()).isFalse();
            JsonNode seenList = json(send("GET", "/api/jobs?businessType=hidden-" + run, auth, null));
            assertThat(seenList.path("items").get(0).path("arguments").get(1).asString())
                    .isEqualTo(secret);
            JsonNode seenBatch = json(send("GET", "/api/batches/" + batchId, auth, null));
            assertThat(seenBatch.path("params").path("ordersPerChunk").asInt()).isEqualTo(1);
            assertThat(seenBatch.path("paramsOmitted").asBoolean()).isFalse();
            assertThat(send("GET", "/dashboard/definitions/" + code, auth, null).body())
                    .contains(secret);
        }
    }

    @Test
    void aViewerCannotSearchTasksByPayloadButAnOperatorCan() {
        String queue = "hidden-search-" + run;
        RawHttp.Response task = send(
                "POST",
                "/api/tasks",
                OPERATOR,
                "{\"kind\":\"order.sync\",\"queue\":\"" + queue
                        + "\",\"payload\":{\"orderId\":7,\"operator\":\"secret\"}}");
        assertThat(task.status()).as(task.body()).isEqualTo(201);
        String search = "/api/tasks?queue=" + queue + "&payloadPath=operator&payloadValue=secret";
        RawHttp.Response refused = send("GET", search, VIEWER, null);
        assertThat(refused.status()).as(refused.body()).isEqualTo(403);
        // The other filters stay open to viewers.
        RawHttp.Response byQueue = send("GET", "/api/tasks?paging=keyset&queue=" + queue, VIEWER, null);
        assertThat(byQueue.status()).as(byQueue.body()).isEqualTo(200);
        assertThat(json(byQueue).path("items")).hasSize(1);
        JsonNode found = json(send("GET", search, OPERATOR, null));
        assertThat(found.path("items").get(0).path("id").asLong())
                .isEqualTo(json(task).path("id").asLong());
    }

    private RawHttp.Response send(String method, String path, String authorization, String json) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", authorization);
        if (json != null) {
            headers.put("Content-Type", "application/json");
        }
        return http.send(method, path, headers, json == null ? null : json.getBytes(StandardCharsets.UTF_8));
    }

    private JsonNode json(RawHttp.Response r) {
        return mapper.readTree(r.body());
    }
}
