package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Hostile requests over every endpoint of the task, job and batch API, generated from a seed ({@code
 * -Ddbtasks.fuzz.seed}, default fixed, so a failure reproduces; {@code -Ddbtasks.fuzz.requests},
 * default 10,000): huge values; NUL, lone surrogates (as JSON escapes), line breaks and
 * overlong or invalid UTF-8 bytes in every text field of every body, in paths and in query strings;
 * invalid %-encodings, loose integers ({@code 0x10},
 * {@code #10}, {@code +1}, Arabic-Indic digits, {@code "1"}, {@code 1.5}), far-away {@code runAt}s,
 * wrong types, deep nesting, bad methods, media types, Hosts and Idempotency-Keys. Every answer must
 * be below 500; every error must be problem+json naming no Java class and echoing no huge value;
 * no Location names another host. The engine's health is polled every {@value #HEALTH_EVERY}
 * requests and must stay UP throughout. Valid tasks interleaved with the fuzz must all succeed. Run
 * once per database by the subclasses.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.poll-interval=50ms",
            "dbtasks.queues.default=4",
            "dbtasks.default-retry.backoff=fixed",
            "dbtasks.default-retry.initial=100ms",
            "dbtasks.server.seed-demo-jobs=false",
            "logging.level.io.dbtasks=WARN",
            "logging.level.io.dbtasks.server.demo=WARN"
        })
@TestPropertySource(locations = "classpath:test-users.properties")
abstract class FuzzContract {
    private static final Logger log = LoggerFactory.getLogger(FuzzContract.class);
    private static final String OPERATOR = RawHttp.basic("operator", "operator-secret");
    private static final String ADMIN = RawHttp.basic("admin", "admin-secret");
    /** Requests between two polls of the health endpoint. */
    static final int HEALTH_EVERY = 100;

    @LocalServerPort
    int port;

    @Autowired
    JsonMapper mapper;

    private final String run = UUID.randomUUID().toString().substring(0, 8);

    /** @return how many requests this database's run sends */
    int requests() {
        return Integer.getInteger("dbtasks.fuzz.requests", 10_000);
    }

    @Test
    void hostileRequestsGetNo5xxOnlyProblemJsonAndLoseNothing() {
        long seed = Long.getLong("dbtasks.fuzz.seed", 20261123L);
        Random random = new Random(seed);
        RawHttp http = new RawHttp(port).timeout(60_000); // generous: test machines may be shared
        Hostile hostile = new Hostile(random);
        Map<Integer, Integer> statuses = new TreeMap<>();
        List<Long> valid = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        int n = requests();
        int healthPolls = 0;
        for (int i = 0; i < n; i++) {
            if (i % HEALTH_EVERY == 0) {
                healthPolls++;
                String down = healthProblem(http);
                if (down != null) {
                    failures.add("seed " + seed + " before request " + i + ": " + down);
                }
            }
            if (i % 25 == 0) {
                valid.add(enqueueValid(http, i));
                continue;
            }
            Request r = hostile.request();
            RawHttp.Response response;
            try {
                response = http.send(r.method, Hostile.bytes(r.target), r.headers, r.body);
            } catch (IllegalStateException e) {
                failures.add("seed " + seed + " request " + i + ": " + r.method + " " + abbreviate(r.target) + " "
                        + abbreviate(r.headers.toString()) + " got no answer: " + e.getMessage());
                continue;
            }
            statuses.merge(response.status(), 1, Integer::sum);
            try {
                check(seed, i, r, response);
            } catch (AssertionError e) {
                failures.add(e.getMessage().strip());
                if (failures.size() >= 30) {
                    break;
                }
            }
        }
        String down = healthProblem(http);
        if (down != null) {
            failures.add("seed " + seed + " after the run: " + down);
        }
        assertThat(failures).as("failed checks (at most 30 shown)").isEmpty();
        assertThat(healthPolls).as("health polls").isGreaterThanOrEqualTo(n / HEALTH_EVERY);
        log.info("Fuzz seed {}: {} requests, statuses {}, {} valid tasks interleaved", seed, n, statuses, valid.size());
        assertThat(statuses.keySet()).as("statuses").allMatch(s -> s < 500);
        assertThat(statuses.keySet())
                .as("the fuzz reached handlers and refusals")
                .contains(200, 400, 404);
        await().atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    for (long id : valid) {
                        String status = json(http.send("GET", "/api/tasks/" + id, Map.of("Authorization", ADMIN), null))
                                .path("status")
                                .asString();
                        if (!status.equals("SUCCEEDED")) {
                            return false;
                        }
                    }
                    return true;
                });
    }

    /** @return why the engine's health is not UP, or {@code null} if it is */
    private String healthProblem(RawHttp http) {
        RawHttp.Response health = http.send("GET", "/actuator/health", Map.of("Authorization", ADMIN), null);
        if (health.status() != 200 || !json(health).path("status").asString().equals("UP")) {
            return "health " + health.status() + " " + abbreviate(health.body());
        }
        return null;
    }

    private long enqueueValid(RawHttp http, int i) {
        String body = "{\"kind\":\"order.sync\",\"payload\":{\"orderId\":" + i
                + ",\"operator\":\"fuzz\"},\"idempotencyKey\":\"fuzz-valid-" + run + "-" + i + "\"}";
        RawHttp.Response r = http.send(
                "POST",
                "/api/tasks",
                Map.of("Authorization", OPERATOR, "Content-Type", "application/json"),
                body.getBytes(StandardCharsets.UTF_8));
        assertThat(r.status()).as("valid task %d: %s", i, r.body()).isEqualTo(201);
        return json(r).path("id").asLong();
    }

    private void check(long seed, int i, Request r, RawHttp.Response response) {
        String what = "seed " + seed + " request " + i + ": " + r.method + " " + abbreviate(r.target) + " "
                + abbreviate(r.body == null ? "" : new String(r.body, StandardCharsets.UTF_8)) + " headers "
                + abbreviate(r.headers.toString()) + " -> " + response.status() + " " + abbreviate(response.body());
        assertThat(response.status()).as(what).isLessThan(500);
        String location = response.header("Location");
        if (location != null) {
            assertThat(location).as(what).doesNotContain("evil");
            if (r.target.startsWith("/api/tasks")) {
                assertThat(location).as(what).startsWith("/");
            }
        }
        boolean browserPage = !r.target.equals("/api")
                && !r.target.startsWith("/api/")
                && !r.target.startsWith("/api?")
                && r.headers.get("Accept") != null
                && r.headers.get("Accept").contains("text/html");
        String type = response.contentType();
        if (response.status() >= 400
                && !r.method.equals("HEAD")
                && browserPage
                && type != null
                && type.startsWith("text/html")) {
            // A browser's navigation outside the API may get the dashboard's HTML error page.
            assertThat(response.body())
                    .as(what)
                    .doesNotContain("java.", "jakarta.", "org.springframework", "io.dbtasks.", "Exception", "SQLState");
        } else if (response.status() >= 400 && !r.method.equals("HEAD")) {
            assertThat(response.contentType()).as(what).isNotNull().startsWith("application/problem+json");
            JsonNode body = json(response);
            assertThat(body.path("status").asInt()).as(what).isEqualTo(response.status());
            assertThat(body.path("title").isString()).as(what).isTrue();
            assertThat(response.bytes().length).as(what).isLessThan(4_000);
            assertThat(response.body())
                    .as(what)
                    .doesNotContain(
                            "java.",
                            "jakarta.",
                            "tools.jackson",
                            "com.fasterxml",
                            "org.springframework",
                            "org.apache",
                            "io.dbtasks.",
                            "Exception",
                            "SQLState");
        }
    }

    private JsonNode json(RawHttp.Response r) {
        return mapper.readTree(r.body());
    }

    private static String abbreviate(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "...(" + s.length() + ")" : s;
    }

    record Request(String method, String target, Map<String, String> headers, byte[] body) {}

    /** Generates the hostile requests. */
    static final class Hostile {
        private static final String[] KINDS = {"order.sync", "order.create", "order.no-param", "demo.flaky"};
        private static final String[] LOOSE_INTEGERS = {
            "0x10",
            "%2310",
            "+1",
            "%D9%A1%D9%A0",
            "1.5",
            "1e3",
            "-0",
            "00",
            "9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999999",
            "%201",
            "1%20",
            "١٠",
            "%EF%BC%91",
            "",
            "-",
            "0b1",
            "NaN",
            "Infinity",
            "1_000",
            "%00",
            "1%00"
        };
        private static final String[] BAD_ENCODINGS = {
            "%", "%z", "%zz", "%f", "%ff", "%FF%FE", "%ED%A0%80", "%C0%AF", "%E0%80%AF", "%F8%88%80%80%80", "%80",
            "%00", "a%00b", "%25", "%2F", "%5C", "..%2F..", "%u0041", "%%", "%1", "%G1", "%C3%28"
        };
        private static final String[] RUN_ATS = {
            "\"+1000000000-12-31T23:59:59Z\"",
            "31556889864403199",
            "-31556889864403199",
            "\"-999999999-01-01T00:00:00Z\"",
            "\"0000-01-01T00:00:00Z\"",
            "\"1969-12-31T23:59:59Z\"",
            "\"10000-01-01T00:00:00Z\"",
            "\"9999-12-31T23:59:59Z\"",
            "\"2030-02-30T00:00:00Z\"",
            "\"2030-01-01T00:00:00\"",
            "\"2030-01-01T00:00:00+25:00\"",
            "\"2030-01-01\"",
            "1.5e300",
            "-1",
            "0",
            "1e20",
            "true",
            "[]",
            "{}",
            "\"\"",
            "\"2030-01-01T00:00:00.123456789Z\"",
            "\"\\u0000\"",
            "\"2030-01-01T00:00:00Z\\u0000\""
        };
        private static final String[] ACCEPTS = {
            null,
            "application/json",
            "text/html",
            "text/plain",
            "application/xml",
            "image/png",
            "*/*",
            "application/*",
            "bogus",
            "application/problem+json",
            "text/event-stream",
            ";;;",
            "application/json;q=0"
        };
        private static final String[] CONTENT_TYPES = {
            "application/json",
            "application/json",
            "application/json",
            "text/plain",
            "application/xml",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/json; charset=latin1",
            "bogus",
            "application/json; charset=utf-16",
            null
        };

        private final Random random;

        Hostile(Random random) {
            this.random = random;
        }

        private <T> T pick(T[] values) {
            return values[random.nextInt(values.length)];
        }

        Request request() {
            int endpoint = random.nextInt(22);
            Map<String, String> headers = new LinkedHashMap<>();
            headers.put("Authorization", random.nextInt(20) == 0 ? pickAuth() : OPERATOR);
            if (random.nextInt(6) == 0) {
                headers.put("Accept", pick(ACCEPTS));
            }
            if (random.nextInt(15) == 0 && endpoint < 16) {
                headers.put("Host", random.nextBoolean() ? "evil.example" : "evil.example:666");
            }
            if (random.nextInt(8) == 0) {
                headers.put("Idempotency-Key", idempotencyKey());
            }
            return switch (endpoint) {
                case 0, 1, 2, 3 -> create(headers);
                case 4 -> list(headers);
                case 5 -> new Request("GET", "/api/tasks/" + id(), headers, null);
                case 6 -> new Request("GET", "/api/tasks/" + id() + "/attempts", headers, null);
                case 7 -> new Request("GET", "/api/tasks/by-key/" + pathText(), headers, null);
                case 8 ->
                    new Request(
                            "POST",
                            "/api/tasks/" + id() + "/retry" + maybe("?additionalAttempts=" + integer()),
                            headers,
                            null);
                case 9 -> new Request("POST", "/api/tasks/" + id() + "/cancel", headers, null);
                case 10 -> reschedule(headers);
                case 11 -> new Request("POST", "/api/tasks/run" + maybe("?key=" + queryText()), headers, null);
                case 12 ->
                    new Request("GET", "/api/stats" + maybe("?" + queryText() + "=" + queryText()), headers, null);
                case 13 -> wrongMethod(headers);
                case 14 -> other(headers);
                case 15 -> new Request(pick(new String[] {"GET", "POST"}), "/api/" + pathText(), headers, null);
                case 16, 17 -> job(headers);
                case 18 -> jobRuns(headers);
                case 19 -> batch(headers);
                case 20 -> jobByCode(headers);
                default -> batchById(headers);
            };
        }

        /** Job definitions are admin's; most requests are, so they reach the handler. */
        private void asAdmin(Map<String, String> headers) {
            if (random.nextInt(5) > 0) {
                headers.put("Authorization", ADMIN);
            }
        }

        private void json(Map<String, String> headers) {
            String ct = pick(CONTENT_TYPES);
            headers.put("Content-Type", ct == null || random.nextInt(3) > 0 ? "application/json" : ct);
        }

        private Request job(Map<String, String> headers) {
            asAdmin(headers);
            json(headers);
            StringBuilder b = new StringBuilder("{");
            b.append("\"code\":").append(random.nextInt(3) == 0 ? "\"fz-job-" + random.nextInt(20) + "\"" : text());
            field(b, "name", text());
            field(b, "description", text());
            b.append(",\"businessType\":").append(random.nextInt(3) == 0 ? "\"fuzz\"" : text());
            field(b, "businessId", text());
            b.append(",\"bean\":").append(random.nextInt(3) == 0 ? "\"orderService\"" : text());
            b.append(",\"method\":").append(random.nextInt(3) == 0 ? "\"syncOrder\"" : text());
            field(b, "parameterTypes", "[" + text() + "," + text() + "]");
            field(b, "arguments", random.nextBoolean() ? "[1," + text() + "]" : text());
            field(b, "queue", text());
            field(b, "maxAttempts", jsonInteger());
            field(b, "retryDelayMillis", jsonInteger());
            field(b, "cron", random.nextBoolean() ? "\"0 0 * * * *\"" : text());
            field(b, "timeZone", random.nextBoolean() ? "\"UTC\"" : text());
            field(b, "enabled", pick(new String[] {"true", "false", "\"true\"", "1", "null"}));
            if (random.nextInt(10) == 0) {
                field(b, pick(new String[] {"bogus", "\\u0000", "code"}), text());
            }
            String body = random.nextInt(10) == 0 ? garbage() : b.append('}').toString();
            return random.nextInt(3) == 0
                    ? new Request("PUT", "/api/jobs/" + pathText(), headers, bytes(body))
                    : new Request("POST", "/api/jobs", headers, bytes(body));
        }

        private Request jobRuns(Map<String, String> headers) {
            asAdmin(headers);
            json(headers);
            String body = switch (random.nextInt(5)) {
                case 0 -> "{\"codes\":[" + text() + "," + text() + "]}";
                case 1 -> "{\"businessType\":" + text() + "}";
                case 2 ->
                    "{\"failed\":" + pick(new String[] {"true", "\"true\"", "1"}) + ",\"businessType\":" + text() + "}";
                case 3 -> "{\"codes\":" + text() + "}";
                default -> garbage();
            };
            return new Request("POST", "/api/job-runs", headers, bytes(body));
        }

        private Request batch(Map<String, String> headers) {
            asAdmin(headers);
            json(headers);
            StringBuilder b = new StringBuilder("{");
            b.append("\"kind\":").append(random.nextInt(3) == 0 ? "\"orders.sync\"" : text());
            b.append(",\"chunks\":").append(random.nextBoolean() ? "1" : jsonInteger());
            field(b, "params", payload());
            field(b, "name", text());
            field(b, "idempotencyKey", text());
            field(b, "maxAttempts", jsonInteger());
            String body = random.nextInt(10) == 0 ? garbage() : b.append('}').toString();
            return new Request("POST", "/api/batches", headers, bytes(body));
        }

        private Request jobByCode(Map<String, String> headers) {
            asAdmin(headers);
            return switch (random.nextInt(4)) {
                case 0 -> new Request("GET", "/api/jobs/" + pathText(), headers, null);
                case 1 -> new Request("DELETE", "/api/jobs/" + pathText(), headers, null);
                case 2 -> new Request("POST", "/api/jobs/" + pathText() + "/runs", headers, null);
                default ->
                    new Request(
                            "GET",
                            "/api/jobs?businessType=" + queryText() + maybe("&after=" + integer())
                                    + maybe("&limit=" + integer()),
                            headers,
                            null);
            };
        }

        private Request batchById(Map<String, String> headers) {
            asAdmin(headers);
            return random.nextBoolean()
                    ? new Request("GET", "/api/batches/" + id(), headers, null)
                    : new Request("POST", "/api/batches/" + id() + "/retries", headers, null);
        }

        private String pickAuth() {
            return pick(new String[] {
                null,
                "Basic Zm9vOmJhcg==",
                "Bearer nope",
                "Basic !!!",
                "Bearer ",
                RawHttp.basic("viewer", "viewer-secret"),
                ADMIN,
                "Digest x"
            });
        }

        private String idempotencyKey() {
            return switch (random.nextInt(6)) {
                case 0 -> "\"k-" + random.nextInt(50) + "\"";
                case 1 -> "k-" + random.nextInt(50);
                case 2 -> "x".repeat(300);
                case 3 -> "";
                case 4 -> "ключ";
                default -> "k\u0001";
            };
        }

        private String maybe(String s) {
            return random.nextBoolean() ? s : "";
        }

        private String id() {
            return switch (random.nextInt(4)) {
                case 0 -> String.valueOf(random.nextInt(200));
                case 1 -> pick(LOOSE_INTEGERS);
                case 2 -> pick(BAD_ENCODINGS);
                default -> String.valueOf(random.nextLong());
            };
        }

        private String integer() {
            return random.nextBoolean() ? String.valueOf(random.nextInt(5) - 1) : pick(LOOSE_INTEGERS);
        }

        private String pathText() {
            return switch (random.nextInt(5)) {
                case 0 -> pick(BAD_ENCODINGS);
                case 1 -> "k" + random.nextInt(100);
                case 2 -> "a".repeat(random.nextInt(3000));
                case 3 -> "%F0%9F%98%80%E2%80%AE" + pick(BAD_ENCODINGS);
                case 4 -> random.nextBoolean() ? "..\uE000etc\uE000passwd" : "k\uE001\uE003";
                default -> pick(BAD_ENCODINGS) + "x" + pick(BAD_ENCODINGS);
            };
        }

        private String queryText() {
            return switch (random.nextInt(6)) {
                case 5 -> "..\uE000etc\uE000passwd";
                case 0 -> pick(BAD_ENCODINGS);
                case 1 -> "v" + random.nextInt(100);
                case 2 -> "b".repeat(random.nextInt(5000));
                case 3 -> pick(LOOSE_INTEGERS);
                default -> "%E2%80%AE" + pick(BAD_ENCODINGS) + "+" + pick(BAD_ENCODINGS);
            };
        }

        private Request list(Map<String, String> headers) {
            StringBuilder q = new StringBuilder("/api/tasks?");
            String[] params = {"status", "queue", "kind", "page", "size", "include", "x"};
            int count = random.nextInt(4);
            for (int i = 0; i < count; i++) {
                String p = pick(params);
                String v = switch (p) {
                    case "page", "size" -> integer();
                    case "status" -> pick(new String[] {"PENDING", "failed", "BOGUS", "%00", "SUCCEEDED"});
                    case "include" -> pick(new String[] {"payload", "x", ""});
                    default -> queryText();
                };
                q.append(p).append('=').append(v).append('&');
            }
            return new Request("GET", q.toString(), headers, null);
        }

        private Request reschedule(Map<String, String> headers) {
            headers.put("Content-Type", pick(CONTENT_TYPES) == null ? "application/json" : "application/json");
            String body = random.nextInt(5) == 0 ? garbage() : "{\"runAt\":" + pick(RUN_ATS) + "}";
            return new Request("POST", "/api/tasks/" + id() + "/reschedule", headers, bytes(body));
        }

        private Request wrongMethod(Map<String, String> headers) {
            String method = pick(new String[] {"PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "FOO"});
            String path = pick(new String[] {"/api/tasks", "/api/tasks/1", "/api/stats", "/api/tasks/run", "/error"});
            return new Request(method, path, headers, method.equals("PUT") ? bytes("{}") : null);
        }

        private Request other(Map<String, String> headers) {
            String path = pick(new String[] {
                "/error",
                "/",
                "/login",
                "/v3/api-docs",
                "/swagger-ui.html",
                "/actuator/health",
                "/nothing",
                "/api",
                "/api/",
                "//api//tasks",
                "/api/tasks/",
                "/api/./tasks",
                "/api/tasks/../stats",
                "/api/tasks;jsessionid=1",
                "/api/tasks?%zz",
                "/api/tasks?page=%",
                "/api/tasks?foo=%ff",
                "/api/tasks/run?key=%ED%A0%80",
                "/api/tasks?" + "q=1&".repeat(2000)
            });
            return new Request(random.nextInt(4) == 0 ? "POST" : "GET", path, headers, null);
        }

        private Request create(Map<String, String> headers) {
            String ct = pick(CONTENT_TYPES);
            if (ct != null) {
                headers.put("Content-Type", ct);
            }
            String query = random.nextInt(10) == 0 ? "?returnExisting=" + pick(new String[] {"true", "1", "x"}) : "";
            int shape = random.nextInt(12);
            String body;
            if (shape == 0) {
                body = garbage();
            } else if (shape == 1) {
                // Beyond 1 MB: 413.
                body = "{\"kind\":\"order.sync\",\"payload\":{\"orderId\":1,\"operator\":\""
                        + "x".repeat(1_100_000 + random.nextInt(10_000)) + "\"}}";
            } else if (shape == 2) {
                body = "{\"kind\":\"order.sync\",\"payload\":" + "[".repeat(3000) + "]".repeat(3000) + "}";
            } else {
                body = object();
            }
            return new Request("POST", "/api/tasks" + query, headers, bytes(body));
        }

        private String object() {
            StringBuilder b = new StringBuilder("{");
            String kind = random.nextInt(8) == 0 ? text() : "\"" + pick(KINDS) + "\"";
            b.append("\"kind\":").append(kind);
            if (random.nextInt(3) > 0) {
                b.append(",\"payload\":").append(payload());
            }
            field(b, "queue", random.nextInt(3) == 0 ? "\"fuzz-q\"" : text());
            field(b, "priority", jsonInteger());
            field(b, "maxAttempts", jsonInteger());
            field(b, "runAt", pick(RUN_ATS));
            field(b, "idempotencyKey", random.nextBoolean() ? "\"fz-" + random.nextInt(40) + "\"" : text());
            field(b, "name", text());
            field(b, "reference", text());
            if (random.nextInt(10) == 0) {
                field(b, pick(new String[] {"maxAttempt", "bogus", "\\u0000", "kind"}), text());
            }
            if (random.nextInt(10) == 0) {
                field(b, "returnExisting", pick(new String[] {"true", "1", "\"true\"", "null"}));
            }
            return b.append('}').toString();
        }

        private void field(StringBuilder b, String name, String value) {
            if (random.nextBoolean()) {
                b.append(",\"").append(name).append("\":").append(value);
            }
        }

        private String jsonInteger() {
            return pick(new String[] {
                "1",
                "0",
                "-1",
                "\"1\"",
                "1.5",
                "1.0",
                "1e2",
                "2147483648",
                "-2147483649",
                "9999999999999999999999",
                "0x10",
                "+1",
                "\"#10\"",
                "\"١٠\"",
                "null",
                "true",
                "[]",
                "{}",
                "NaN",
                "--1",
                "01"
            });
        }

        private String payload() {
            return switch (random.nextInt(8)) {
                case 0 -> "{\"orderId\":" + jsonInteger() + ",\"operator\":" + text() + "}";
                case 1 ->
                    "{\"orderId\":" + jsonInteger() + ",\"userName\":" + text() + ",\"amount\":"
                            + pick(new String[] {"1.5", "1e400", "-0", "\"x\"", "null", "12.34"}) + "}";
                case 2 -> "{\"failTimes\":" + jsonInteger() + "}";
                case 3 -> text();
                case 4 -> "null";
                case 5 -> "{\"" + "\\u0000" + "\":1}";
                case 6 -> "[" + text() + "," + text() + "]";
                default -> "{\"orderId\":1,\"operator\":\"o\"}";
            };
        }

        private String text() {
            return switch (random.nextInt(18)) {
                case 12 -> "\"..\uE000etc\uE000passwd\"";
                case 13 -> "\"x\uE001y\uE002z\"";
                case 14 -> "\"a\\r\\nINFO forged\\u0085\"";
                case 15 -> "\"\\ud800\\udc00 ok \\udbff\"";
                case 16 -> "\"\\u0000\"";
                case 17 -> "\"\uE003\"";
                case 0 -> "\"a\\u0000b\"";
                case 1 -> "\"\\ud800\"";
                case 2 -> "\"x\\udc00y\"";
                case 3 -> "\"" + "z".repeat(random.nextInt(random.nextInt(20) == 0 ? 300_000 : 3_000)) + "\"";
                case 4 -> "\"\"";
                case 5 -> "\"   \"";
                case 6 -> "\"\\u202e\\ud83d\\ude00 e\\u0301\"";
                case 7 -> "123";
                case 8 -> "null";
                case 9 -> "\"" + "y".repeat(201) + "\"";
                case 10 -> "\"'; DROP TABLE dbtasks_task; --\"";
                default -> "\"t" + random.nextInt(1000) + "\"";
            };
        }

        private String garbage() {
            return pick(new String[] {
                "",
                "{",
                "}",
                "[",
                "null",
                "1",
                "\"x\"",
                "{\"kind\":",
                "{\"kind\":\"order.sync\",}",
                "{'kind':'x'}",
                "\u0000",
                "{\"kind\":\"order.sync\"}garbage",
                "{\"kind\":\"order.sync\",\"kind\":\"order.create\"}",
                "\ufeff{\"kind\":\"order.no-param\"}",
                "{\"kind\":\"order.no-param\"}\n\n",
                "\u00ff\u00fe"
            });
        }

        /**
         * @return {@code s} in UTF-8, with each private-use marker replaced by bytes that are not
         *     UTF-8: U+E000 by the overlong {@code C0 AF} ('/'), U+E001 by the overlong {@code E0 80
         *     AF}, U+E002 by {@code ED A0 80} (an encoded surrogate), U+E003 by {@code FF FE}
         */
        static byte[] bytes(String s) {
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(utf8.length);
            for (int i = 0; i < utf8.length; i++) {
                if (i + 2 < utf8.length && utf8[i] == (byte) 0xEE && utf8[i + 1] == (byte) 0x80) {
                    byte[] raw = switch (utf8[i + 2]) {
                        case (byte) 0x80 -> new byte[] {(byte) 0xC0, (byte) 0xAF};
                        case (byte) 0x81 -> new byte[] {(byte) 0xE0, (byte) 0x80, (byte) 0xAF};
                        case (byte) 0x82 -> new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80};
                        case (byte) 0x83 -> new byte[] {(byte) 0xFF, (byte) 0xFE};
                        default -> null;
                    };
                    if (raw != null) {
                        out.writeBytes(raw);
                        i += 2;
                        continue;
                    }
                }
                out.write(utf8[i]);
            }
            return out.toByteArray();
        }
    }
}
