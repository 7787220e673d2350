package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Each hardening item of the issue, one by one, on H2 (the fuzz suite covers them at random on
 * every database): runAt range, invalid %-encodings, NUL and lone surrogates naming the field,
 * problem+json for 404/405/406/413/415 and {@code GET /error}, no class names, no huge echo, size
 * limits, payloads in lists only on request, relative Location whatever the Host, the unserved-queue
 * warning, strict integers, and the OpenAPI document.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.server.seed-demo-jobs=false",
            "dbtasks.queues.default=1",
            "dbtasks.server.list-payload-limit=50"
        })
@TestPropertySource(locations = "classpath:test-users.properties")
class HardeningTest {
    private static final String OPERATOR = RawHttp.basic("operator", "operator-secret");

    @LocalServerPort
    int port;

    @Autowired
    JsonMapper mapper;

    RawHttp http;
    final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void requireDatabase() {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:dbtasks_server_hardening;DB_CLOSE_DELAY=-1");
    }

    @BeforeEach
    void client() {
        http = new RawHttp(port);
    }

    @Test
    void runAtOutsideTheSupportedRangeIs400() {
        for (String runAt : new String[] {
            "\"+1000000000-12-31T23:59:59Z\"",
            "31556889864403199",
            "\"1969-12-31T23:59:59Z\"",
            "\"10000-01-01T00:00:00Z\""
        }) {
            problem(create("{\"kind\":\"order.no-param\",\"runAt\":" + runAt + "}"), 400, "runAt");
        }
        assertThat(create("{\"kind\":\"order.no-param\",\"queue\":\"idle-" + run
                                + "\",\"runAt\":\"9999-12-31T23:59:59Z\"}")
                        .status())
                .isEqualTo(201);
        problem(post("/api/tasks/1/reschedule", "{\"runAt\":\"+1000000000-12-31T23:59:59Z\"}"), 400, "runAt");
    }

    @Test
    void invalidPercentEncodingsAre400() {
        problem(send("POST", "/api/tasks/run?key=%ED%A0%80", null), 400, "'key' has an invalid %-encoding");
        problem(send("GET", "/api/tasks?foo=%ff", null), 400, "'foo'");
        problem(send("GET", "/api/tasks?x=%zz", null), 400, "invalid %-encoding");
        problem(send("GET", "/api/tasks/by-key/%C3%28", null), 400, ""); // Tomcat or the filter: problem+json
        problem(send("GET", "/api/tasks/by-key/%zz", null), 400, "");
        problem(send("GET", "/api/tasks/by-key/%C0%AF", null), 400, ""); // Tomcat refuses it first: still problem+json
        problem(send("GET", "/api/tasks?queue=a%00b", null), 400, "'queue' contains a NUL");
        problem(send("GET", "/api/tasks/by-key/a%00", null), 400, ""); // the firewall refuses it first
    }

    @Test
    void nulAndLoneSurrogatesAre400NamingTheField() {
        for (String field : new String[] {"queue", "idempotencyKey", "name", "reference"}) {
            problem(create("{\"kind\":\"order.no-param\",\"" + field + "\":\"a\\u0000b\"}"), 400, "'" + field + "'");
            problem(create("{\"kind\":\"order.no-param\",\"" + field + "\":\"a\\ud800b\"}"), 400, "'" + field + "'");
        }
        problem(
                create("{\"kind\":\"order.sync\",\"payload\":{\"orderId\":1,\"operator\":\"x\\udc00\"}}"),
                400,
                "'payload.operator'");
        problem(create("{\"kind\":\"order.sync\",\"payload\":{\"orderId\":1,\"operator\":\"\\u0000\"}}"), 400, "NUL");
        // A surrogate pair (an emoji) is valid Unicode.
        assertThat(create("{\"kind\":\"order.no-param\",\"queue\":\"idle-" + run + "\",\"name\":\"\\ud83d\\ude00\"}")
                        .status())
                .isEqualTo(201);
    }

    @Test
    void everyErrorIsProblemJsonWithoutClassNames() {
        problem(send("GET", "/api/nothing", null), 404, "");
        problem(send("PUT", "/api/tasks", "{}"), 405, "");
        RawHttp.Response notAcceptable =
                http.send("GET", "/api/stats", Map.of("Authorization", OPERATOR, "Accept", "text/html"), null);
        problem(notAcceptable, 406, "");
        RawHttp.Response unsupported = http.send(
                "POST",
                "/api/tasks",
                Map.of("Authorization", OPERATOR, "Content-Type", "text/plain"),
                "x".getBytes(StandardCharsets.UTF_8));
        problem(unsupported, 415, "");
        problem(send("GET", "/error", null), 404, "/error");
        problem(create("{\"kind\":\"order.no-param\",\"priority\":\"high\"}"), 400, "'priority'");
    }

    @Test
    void hugeValuesAreNotEchoedAndLargeBodiesAre413() {
        RawHttp.Response r = create("{\"kind\":\"" + "k".repeat(100_000) + "\"}");
        problem(r, 400, "Unknown task kind");
        assertThat(r.bytes().length).isLessThan(2_000);
        problem(
                create("{\"kind\":\"order.sync\",\"payload\":{\"orderId\":1,\"operator\":\"" + "x".repeat(1_100_000)
                        + "\"}}"),
                413,
                "max-request-size");
        problem(send("GET", "/api/tasks?" + "a=1&".repeat(300), null), 400, "parameters");
    }

    @Test
    void listsShowLongPayloadsOnlyOnRequest() {
        String queue = "list-" + run;
        assertThat(create("{\"kind\":\"order.sync\",\"queue\":\"" + queue
                                + "\",\"payload\":{\"orderId\":1,\"operator\":\"" + "o".repeat(100) + "\"}}")
                        .status())
                .isEqualTo(201);
        JsonNode plain = json(send("GET", "/api/tasks?queue=" + queue, null))
                .path("items")
                .get(0);
        assertThat(plain.path("payload").isNull()).as(plain.toString()).isTrue();
        assertThat(plain.path("payloadOmitted").asBoolean()).isTrue();
        JsonNode full = json(send("GET", "/api/tasks?queue=" + queue + "&include=payload", null))
                .path("items")
                .get(0);
        assertThat(full.path("payload").path("operator").asString()).hasSize(100);
        assertThat(full.path("payloadOmitted").asBoolean()).isFalse();
        problem(send("GET", "/api/tasks?include=everything", null), 400, "'include'");
    }

    @Test
    void locationIsRelativeWhateverTheHostAndUnservedQueuesWarn() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", OPERATOR);
        headers.put("Content-Type", "application/json");
        headers.put("Host", "evil.example");
        RawHttp.Response r = http.send(
                "POST",
                "/api/tasks",
                headers,
                ("{\"kind\":\"order.no-param\",\"queue\":\"nobody-" + run + "\"}").getBytes(StandardCharsets.UTF_8));
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.header("Location"))
                .isEqualTo("/api/tasks/" + json(r).path("id").asLong());
        assertThat(r.header("Warning")).contains("No live instance serves queue 'nobody-" + run + "'");
        RawHttp.Response served = create("{\"kind\":\"order.no-param\"}");
        assertThat(served.status()).isEqualTo(201);
        assertThat(served.header("Warning")).isNull();
    }

    @Test
    void idsAndIntegersAreStrict() {
        for (String id : new String[] {"0x10", "%2310", "+1", "%D9%A1%D9%A0", "1.5", "%201", "1e3"}) {
            problem(send("GET", "/api/tasks/" + id, null), 400, "'id' must be an integer");
        }
        problem(send("GET", "/api/tasks?page=+1", null), 400, "'page' must be an integer");
        problem(send("POST", "/api/tasks/1/retry?additionalAttempts=%D9%A1", null), 400, "additionalAttempts");
        problem(create("{\"kind\":\"order.no-param\",\"priority\":\"1\"}"), 400, "'priority'");
        problem(create("{\"kind\":\"order.no-param\",\"priority\":1.5}"), 400, "'priority'");
        problem(create("{\"kind\":\"order.no-param\",\"maxAttempts\":\"3\"}"), 400, "'maxAttempts'");
        problem(create("{\"kind\":\"order.sync\",\"payload\":{\"orderId\":\"1\",\"operator\":\"a\"}}"), 400, "orderId");
        assertThat(send("GET", "/api/tasks/123456789", null).status()).isEqualTo(404);
    }

    @Test
    void openApiDocumentsEndpointsErrorsAndTheIdempotencyKeyPolicy() {
        RawHttp.Response docs = send("GET", "/v3/api-docs", null);
        assertThat(docs.status()).isEqualTo(200);
        JsonNode api = json(docs);
        JsonNode paths = api.path("paths");
        for (String path : new String[] {
            "/api/tasks", "/api/tasks/{id}", "/api/tasks/{id}/attempts", "/api/tasks/by-key/{key}",
            "/api/tasks/{id}/retry", "/api/tasks/{id}/cancel", "/api/tasks/{id}/reschedule", "/api/tasks/run",
            "/api/stats"
        }) {
            assertThat(paths.has(path)).as(path).isTrue();
        }
        JsonNode create = paths.path("/api/tasks").path("post");
        assertThat(names(create.path("responses"))).contains("201", "400", "401", "403", "409", "413", "415", "422");
        assertThat(create.path("responses").path("422").path("content").has("application/problem+json"))
                .isTrue();
        assertThat(create.path("parameters").toString()).contains("Idempotency-Key");
        assertThat(api.path("info").path("description").asString()).contains("expire 24 hours after first use");
        assertThat(api.path("components").path("securitySchemes").has("basic")).isTrue();
        assertThat(send("GET", "/swagger-ui/index.html", null).status()).isEqualTo(200);
    }

    // --- helpers ---------------------------------------------------------------------------------

    private RawHttp.Response create(String json) {
        return post("/api/tasks", json);
    }

    private RawHttp.Response post(String path, String json) {
        return send("POST", path, json);
    }

    private RawHttp.Response send(String method, String path, String json) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", OPERATOR);
        if (json != null) {
            headers.put("Content-Type", "application/json");
        }
        return http.send(method, path, headers, json == null ? null : json.getBytes(StandardCharsets.UTF_8));
    }

    private JsonNode json(RawHttp.Response r) {
        return mapper.readTree(r.body());
    }

    private static java.util.List<String> names(JsonNode node) {
        java.util.List<String> out = new java.util.ArrayList<>();
        node.propertyNames().forEach(out::add);
        return out;
    }

    private void problem(RawHttp.Response r, int status, String detail) {
        assertThat(r.status()).as("%s", r.body()).isEqualTo(status);
        assertThat(r.contentType()).as("content type of %s", r.body()).startsWith("application/problem+json");
        JsonNode body = json(r);
        assertThat(body.path("status").asInt()).isEqualTo(status);
        assertThat(body.path("detail").asString()).contains(detail);
        assertThat(r.body()).doesNotContain("java.", "tools.jackson", "org.springframework", "Exception");
    }
}
