package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Text every endpoint refuses the same way, once per database: NUL and lone surrogates in every
 * text field of job definitions, job runs, batches and tasks (400 naming the field, the engine's
 * health UP after); bytes that are not strict UTF-8 (an overlong {@code /}) in bodies and targets;
 * UTF-16 bodies, duplicate properties, numbers where text is due, control characters in names; and
 * error details that name no Java class.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dbtasks.poll-interval=50ms", "dbtasks.server.seed-demo-jobs=false"})
@TestPropertySource(locations = "classpath:test-users.properties")
abstract class TextValidationContract {
    private static final String ADMIN = RawHttp.basic("admin", "admin-secret");
    private static final List<String> BAD = List.of("a\\u0000b", "\\ud800", "x\\udc00y");

    @LocalServerPort
    int port;

    @Autowired
    JsonMapper mapper;

    private final String run = UUID.randomUUID().toString().substring(0, 8);

    private RawHttp.Response post(String path, String json) {
        return post(path, json.getBytes(StandardCharsets.UTF_8), "application/json");
    }

    private RawHttp.Response post(String path, byte[] body, String contentType) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", ADMIN);
        headers.put("Content-Type", contentType);
        return new RawHttp(port).send("POST", path, headers, body);
    }

    private JsonNode json(RawHttp.Response r) {
        return mapper.readTree(r.body());
    }

    private String job(String code, String field, String value) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("code", "\"" + code + "\"");
        fields.put("name", "\"Sync\"");
        fields.put("description", "\"d\"");
        fields.put("businessType", "\"text-" + run + "\"");
        fields.put("businessId", "\"ORDER-1\"");
        fields.put("bean", "\"orderService\"");
        fields.put("method", "\"syncOrder\"");
        fields.put("parameterTypes", "[\"java.lang.Long\",\"java.lang.String\"]");
        fields.put("arguments", "[1,\"api\"]");
        fields.put("queue", "\"q-" + run + "\"");
        fields.put("cron", "null");
        fields.put("timeZone", "null");
        fields.put(field, value);
        StringBuilder b = new StringBuilder("{");
        fields.forEach((k, v) -> b.append(b.length() > 1 ? "," : "")
                .append('"')
                .append(k)
                .append("\":")
                .append(v));
        return b.append('}').toString();
    }

    private void assertRefused(RawHttp.Response r, String field, String what) {
        assertThat(r.status()).as("%s: %s", what, r.body()).isEqualTo(400);
        assertThat(r.contentType()).as(what).startsWith("application/problem+json");
        assertThat(json(r).path("detail").asString()).as(what).contains("'" + field + "'");
    }

    private void assertHealthUp() {
        RawHttp.Response health =
                new RawHttp(port).send("GET", "/actuator/health", Map.of("Authorization", ADMIN), null);
        assertThat(health.status()).as("health: %s", health.body()).isEqualTo(200);
        assertThat(json(health).path("status").asString()).isEqualTo("UP");
    }

    @Test
    void nulAndLoneSurrogatesInEveryTextFieldAreRefusedNamingItAndHealthStaysUp() {
        for (String bad : BAD) {
            String text = "\"" + bad + "\"";
            for (String field :
                    List.of("code", "name", "description", "businessType", "businessId", "bean", "method", "queue")) {
                assertRefused(post("/api/jobs", job("j-" + run, field, text)), field, "job " + field + " " + bad);
            }
            assertRefused(post("/api/jobs", job("j-" + run, "arguments", "[1," + text + "]")), "arguments[1]", bad);
            assertRefused(
                    post("/api/jobs", job("j-" + run, "parameterTypes", "[" + text + "]")), "parameterTypes[0]", bad);
            assertRefused(post("/api/job-runs", "{\"codes\":[" + text + "]}"), "codes[0]", "job-runs " + bad);
            assertRefused(post("/api/job-runs", "{\"businessType\":" + text + "}"), "businessType", bad);
            assertRefused(
                    post("/api/batches", "{\"kind\":\"orders.sync\",\"chunks\":1,\"name\":" + text + "}"),
                    "name",
                    "batch name " + bad);
            assertRefused(
                    post("/api/batches", "{\"kind\":\"orders.sync\",\"chunks\":1,\"idempotencyKey\":" + text + "}"),
                    "idempotencyKey",
                    "batch key " + bad);
            assertRefused(
                    post("/api/batches", "{\"kind\":\"orders.sync\",\"chunks\":1,\"params\":{\"p\":" + text + "}}"),
                    "params.p",
                    "batch params " + bad);
            assertRefused(post("/api/tasks", "{\"kind\":\"order.no-param\",\"queue\":" + text + "}"), "queue", bad);
        }
        assertHealthUp();
    }

    @Test
    void overlongUtf8IsRefusedNotDecodedIntoASlash() {
        // "../etc/passwd" with each '/' as the overlong two-byte form C0 AF.
        byte[] dots = {'.', '.', (byte) 0xC0, (byte) 0xAF, 'e', 't', 'c', (byte) 0xC0, (byte) 0xAF, 'p'};
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes("{\"codes\":[\"".getBytes(StandardCharsets.UTF_8));
        body.writeBytes(dots);
        body.writeBytes("\"]}".getBytes(StandardCharsets.UTF_8));
        RawHttp.Response r = post("/api/job-runs", body.toByteArray(), "application/json");
        assertThat(r.status()).as(r.body()).isEqualTo(400);
        assertThat(json(r).path("detail").asString()).contains("not valid UTF-8");

        ByteArrayOutputStream target = new ByteArrayOutputStream();
        target.writeBytes("/api/jobs/".getBytes(StandardCharsets.UTF_8));
        target.writeBytes(dots);
        RawHttp.Response raw =
                new RawHttp(port).send("GET", target.toByteArray(), Map.of("Authorization", ADMIN), null);
        assertThat(raw.status()).as(raw.body()).isEqualTo(400);
        RawHttp.Response encoded = new RawHttp(port)
                .send("GET", "/api/jobs?businessType=..%C0%AFetc%C0%AFpasswd", Map.of("Authorization", ADMIN), null);
        assertThat(encoded.status()).as(encoded.body()).isEqualTo(400);
        assertHealthUp();
    }

    @Test
    void lenientJsonIsRefused() {
        byte[] utf16 = "{\"businessType\":\"x\"}".getBytes(StandardCharsets.UTF_16LE);
        assertThat(post("/api/job-runs", utf16, "application/json").status())
                .as("a UTF-16 body")
                .isIn(400, 415);
        assertThat(post(
                                "/api/job-runs",
                                "{\"businessType\":\"x\"}".getBytes(StandardCharsets.UTF_16),
                                "application/json; charset=utf-16")
                        .status())
                .as("a body declared UTF-16")
                .isEqualTo(415);
        RawHttp.Response twice = post("/api/job-runs", "{\"businessType\":\"x\",\"businessType\":\"y\"}");
        assertThat(twice.status()).as("a duplicate property: %s", twice.body()).isEqualTo(400);
        RawHttp.Response number = post("/api/job-runs", "{\"businessType\":1}");
        assertThat(number.status())
                .as("a number for a string: %s", number.body())
                .isEqualTo(400);
        RawHttp.Response bool = post("/api/job-runs", "{\"codes\":[true]}");
        assertThat(bool.status()).as("a boolean for a string: %s", bool.body()).isEqualTo(400);
        for (String queue : List.of("a\\r\\nb", "a\\nINFO forged", "a\\tb", "a\\u0085b")) {
            RawHttp.Response r = post("/api/tasks", "{\"kind\":\"order.no-param\",\"queue\":\"" + queue + "\"}");
            assertRefused(r, "queue", "queue " + queue);
        }
    }

    @Test
    void errorDetailsNameNoJavaClass() {
        for (String target : List.of(
                "/api/batches/abc",
                "/api/jobs?after=abc",
                "/api/tasks/abc",
                "/api/tasks?page=x",
                "/api/jobs?limit=x")) {
            RawHttp.Response r = new RawHttp(port).send("GET", target, Map.of("Authorization", ADMIN), null);
            assertThat(r.status()).as(target).isEqualTo(400);
            assertThat(r.body()).as(target).doesNotContain("java.", "Long", "Integer", "String");
            assertThat(json(r).path("detail").asString()).as(target).contains("must be an integer");
        }
    }
}
