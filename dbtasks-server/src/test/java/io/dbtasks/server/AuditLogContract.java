package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The audit log, once per database: every state-changing endpoint of the API and every dashboard
 * action, for each role, leaves exactly one entry naming the caller, the action and the outcome;
 * successful actions carry their targets, a bulk action its filter and touched count; secrets and
 * bodies are not stored and stored text is bounded; only admins read the log (API and dashboard);
 * entries older than the retention are purged by the periodic purge.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.poll-interval=50ms",
            "dbtasks.shutdown-timeout=2s",
            "dbtasks.server.seed-demo-jobs=false",
            "dbtasks.server.audit.retention=1h",
            "dbtasks.server.audit.purge-interval=200ms"
        })
@TestPropertySource(locations = "classpath:test-users.properties")
abstract class AuditLogContract {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String NO_ID = "999999999999";
    private static final Map<String, String> PASSWORDS =
            Map.of("admin", "admin-secret", "operator", "operator-secret", "viewer", "viewer-secret");
    private static final Set<String> WRITES = Set.of("POST", "PUT", "PATCH", "DELETE");
    private static final Pattern VARIABLE = Pattern.compile("\\{([^}:]+)(?::([^}]*))?}");

    @LocalServerPort
    int port;

    @Autowired
    JsonMapper mapper;

    @Autowired
    DataSource dataSource;

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    RawHttp http;
    final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void client() {
        http = new RawHttp(port);
    }

    /** One request to send: the method, the path as sent, and the action the entry must name. */
    record Call(String method, String path, String action, List<String> targets) {}

    @Test
    void everyStateChangingEndpointAndDashboardActionLeavesExactlyOneEntryPerRole() {
        List<Call> calls = writeEndpoints();
        assertThat(calls.stream().map(Call::action))
                .as("the sweep covers the API and the dashboard's actions")
                .contains(
                        "POST /api/tasks",
                        "POST /api/tasks/{id}/retry",
                        "DELETE /api/jobs/{code}",
                        "POST /api/job-runs",
                        "POST /dashboard/bulk",
                        "POST /dashboard/tasks/{id}/cancel",
                        "POST /dashboard/tasks/{id}/delete",
                        "POST /dashboard/schedules/{name}/resume",
                        "POST /dashboard/definitions/{code}/run",
                        "POST /dashboard/batches/{id}/retry",
                        "POST /dashboard/queues/pause",
                        "POST /dashboard/limits",
                        "POST /dashboard/limits/delete");
        int sent = 0;
        long start = lastId();
        for (String user : List.of("admin", "operator", "viewer")) {
            Session session = login(user);
            for (Call call : calls) {
                long before = lastId();
                RawHttp.Response r = call.path().startsWith("/api/")
                        ? send(call.method(), call.path(), RawHttp.basic(user, PASSWORDS.get(user)), "{}")
                        : form(session, call.method(), call.path(), "");
                sent++;
                JsonNode entry = onlyEntryAfter(before, user + " " + call.method() + " " + call.path());
                String as = user + " " + call.action() + " answered " + r.status();
                assertThat(entry.path("actor").asString()).as(as).isEqualTo(user);
                assertThat(entry.path("role").asString()).as(as).isEqualTo(user);
                assertThat(entry.path("action").asString()).as(as).isEqualTo(call.action());
                assertThat(entry.path("channel").asString())
                        .as(as)
                        .isEqualTo(call.path().startsWith("/api/") ? "api" : "dashboard");
                assertThat(entry.path("status").asInt()).as(as).isEqualTo(r.status());
                assertThat(entry.path("outcome").asString())
                        .as(as)
                        .isEqualTo(r.status() >= 500 ? "FAILED" : r.status() >= 400 ? "REFUSED" : "SUCCESS");
                for (String target : call.targets()) {
                    assertThat(entry.path("target").asString()).as(as).contains(target);
                }
                if (user.equals("viewer")) {
                    assertThat(r.status()).as(as).isEqualTo(403);
                }
            }
            // The bulk preview only reads: no entry.
            long before = lastId();
            assertThat(form(session, "POST", "/dashboard/bulk/preview", "action=retry&queue=x")
                            .status())
                    .isIn(200, 403);
            sent++;
            assertThat(send("GET", "/api/tasks", RawHttp.basic(user, PASSWORDS.get(user)), null)
                            .status())
                    .isEqualTo(200);
            assertThat(lastId()).as("a preview and a read leave no entry").isEqualTo(before);
        }
        assertThat(entriesAfter(start)).hasSize(sent - 3);
    }

    @Test
    void actionsAreRecordedWithOutcomeTargetsBulkFilterAndTouchedCount() {
        String operator = RawHttp.basic("operator", "operator-secret");
        String queue = "audit-" + run;
        long before = lastId();
        RawHttp.Response created = send(
                "POST",
                "/api/tasks",
                operator,
                "{\"kind\":\"order.sync\",\"queue\":\"" + queue
                        + "\",\"payload\":{\"orderId\":1,\"operator\":\"s3cret-payload\"},\"runAt\":\"2999-01-01T00:00:00Z\"}");
        assertThat(created.status()).as(created.body()).isEqualTo(201);
        long id = json(created).path("id").asLong();
        JsonNode entry = onlyEntryAfter(before, "create");
        assertThat(entry.path("outcome").asString()).isEqualTo("SUCCESS");
        assertThat(entry.path("status").asInt()).isEqualTo(201);
        assertThat(entry.path("target").asString()).contains("location=/api/tasks/" + id);
        assertThat(entry.toString()).doesNotContain("s3cret-payload");

        before = lastId();
        assertThat(send("POST", "/api/tasks/" + id + "/cancel", operator, null).status())
                .isEqualTo(200);
        entry = onlyEntryAfter(before, "cancel");
        assertThat(entry.path("action").asString()).isEqualTo("POST /api/tasks/{id}/cancel");
        assertThat(entry.path("target").asString()).isEqualTo("id=" + id);
        assertThat(entry.path("outcome").asString()).isEqualTo("SUCCESS");

        // Cancelling a cancelled task is refused by its state: 409, recorded as refused.
        before = lastId();
        assertThat(send("POST", "/api/tasks/" + id + "/cancel", operator, null).status())
                .isEqualTo(409);
        entry = onlyEntryAfter(before, "cancel again");
        assertThat(entry.path("outcome").asString()).isEqualTo("REFUSED");
        assertThat(entry.path("status").asInt()).isEqualTo(409);

        // A role refusal: the operator may not delete definitions.
        before = lastId();
        assertThat(send("DELETE", "/api/jobs/audit-" + run, operator, null).status())
                .isEqualTo(403);
        entry = onlyEntryAfter(before, "operator delete");
        assertThat(entry.path("action").asString()).isEqualTo("DELETE /api/jobs/{code}");
        assertThat(entry.path("target").asString()).isEqualTo("code=audit-" + run);
        assertThat(entry.path("outcome").asString()).isEqualTo("REFUSED");

        // A dashboard bulk action over a filter: the filter, then the count it touched.
        for (int i = 0; i < 3; i++) {
            assertThat(send(
                                    "POST",
                                    "/api/tasks",
                                    operator,
                                    "{\"kind\":\"order.sync\",\"queue\":\"" + queue
                                            + "\",\"payload\":{\"orderId\":1,\"operator\":\"o\"},\"runAt\":\"2999-01-01T00:00:00Z\"}")
                            .status())
                    .isEqualTo(201);
        }
        Session admin = login("admin");
        before = lastId();
        RawHttp.Response bulk = form(admin, "POST", "/dashboard/bulk", "action=cancel&state=PENDING&queue=" + queue);
        assertThat(bulk.status()).isEqualTo(302);
        long bulkEntry = onlyEntryAfter(before, "bulk").path("id").asLong();
        waiting().untilAsserted(() -> {
            JsonNode e = entryById(bulkEntry);
            assertThat(e.path("action").asString()).isEqualTo("POST /dashboard/bulk");
            assertThat(e.path("filter").asString()).contains("state=PENDING", "queue=" + queue);
            assertThat(e.path("touched").asLong()).isEqualTo(3);
            assertThat(e.path("outcome").asString()).isEqualTo("SUCCESS");
            assertThat(e.path("parameters").asString())
                    .contains("action=cancel")
                    .doesNotContain("_csrf");
        });

        // A dashboard action's form parameters are summarized; secrets and control characters are not kept,
        // and long values are cut.
        before = lastId();
        String longValue = "\u0001line\r\nforged " + "x".repeat(5000);
        RawHttp.Response pause = form(
                admin,
                "POST",
                "/dashboard/queues/pause?password=hunter2",
                "queue=" + queue + "&token=t0ps3cret&note=" + URLEncoder.encode(longValue, StandardCharsets.UTF_8));
        assertThat(pause.status()).isEqualTo(302);
        entry = onlyEntryAfter(before, "pause");
        assertThat(entry.path("parameters").asString())
                .contains("queue=" + queue)
                .doesNotContain("hunter2", "t0ps3cret", "\u0001", "\r", "\n");
        assertThat(entry.path("parameters").asString().length()).isLessThanOrEqualTo(1000);
        assertThat(send("POST", "/dashboard/queues/resume", null, null).status())
                .isIn(401, 403);

        // The job-runs bulk: the selection and how many runs it enqueued.
        String admins = RawHttp.basic("admin", "admin-secret");
        before = lastId();
        RawHttp.Response runs = send("POST", "/api/job-runs", admins, "{\"codes\":[\"audit-none-" + run + "\"]}");
        assertThat(runs.status()).as(runs.body()).isEqualTo(202);
        entry = onlyEntryAfter(before, "job-runs");
        assertThat(entry.path("filter").asString()).contains("codes=[audit-none-" + run + "]");
        assertThat(entry.path("touched").asLong()).isZero();
        assertThat(entry.path("touched").isNull()).isFalse();
    }

    @Test
    void onlyAdminsReadTheAuditLog() {
        for (String user : List.of("viewer", "operator")) {
            RawHttp.Response api = send("GET", "/api/audit", RawHttp.basic(user, PASSWORDS.get(user)), null);
            assertThat(api.status()).as("%s GET /api/audit", user).isEqualTo(403);
            assertThat(api.body()).doesNotContain("\"actor\"");
            Session session = login(user);
            RawHttp.Response page = http.send(
                    "GET", "/dashboard/audit", Map.of("Cookie", session.cookie(), "Accept", "text/html"), null);
            assertThat(page.status()).as("%s GET /dashboard/audit", user).isEqualTo(403);
            assertThat(page.body()).doesNotContain("data-audit-id");
            RawHttp.Response tasks = http.send(
                    "GET", "/dashboard/tasks", Map.of("Cookie", session.cookie(), "Accept", "text/html"), null);
            assertThat(tasks.status()).isEqualTo(200);
            assertThat(tasks.body()).as("%s sees no audit link", user).doesNotContain("/dashboard/audit");
        }
        // Something to show: a refused attempt of the viewer.
        send("POST", "/api/tasks/" + NO_ID + "/retry", RawHttp.basic("viewer", "viewer-secret"), null);
        Session admin = login("admin");
        RawHttp.Response tasks =
                http.send("GET", "/dashboard/tasks", Map.of("Cookie", admin.cookie(), "Accept", "text/html"), null);
        assertThat(tasks.body()).contains("/dashboard/audit");
        RawHttp.Response page =
                http.send("GET", "/dashboard/audit", Map.of("Cookie", admin.cookie(), "Accept", "text/html"), null);
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.body()).contains("data-audit-id", "POST /api/tasks/{id}/retry", "REFUSED 403");

        RawHttp.Response api = send("GET", "/api/audit?page=0&size=2", RawHttp.basic("admin", "admin-secret"), null);
        assertThat(api.status()).isEqualTo(200);
        JsonNode body = json(api);
        assertThat(body.path("items")).hasSizeLessThanOrEqualTo(2);
        assertThat(body.path("total").asLong()).isGreaterThanOrEqualTo(1);
        JsonNode items = body.path("items");
        if (items.size() == 2) {
            assertThat(items.get(0).path("id").asLong())
                    .as("newest first")
                    .isGreaterThan(items.get(1).path("id").asLong());
        }
        assertThat(send("GET", "/api/audit?size=0", RawHttp.basic("admin", "admin-secret"), null)
                        .status())
                .isEqualTo(400);
        // No way to change or delete entries.
        for (String method : List.of("POST", "PUT", "PATCH", "DELETE")) {
            assertThat(send(method, "/api/audit", RawHttp.basic("admin", "admin-secret"), "{}")
                            .status())
                    .as(method + " /api/audit")
                    .isIn(404, 405);
        }
    }

    @Test
    void entriesOlderThanTheRetentionArePurgedPeriodically() {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        long now = System.currentTimeMillis();
        String insert = "INSERT INTO dbtasks_server_audit (created_at, actor, actor_role, channel, action, outcome,"
                + " status) VALUES (?, ?, 'admin', 'api', 'POST /api/tasks', 'SUCCESS', 201)";
        jdbc.update(insert, now - Duration.ofHours(2).toMillis(), "old-" + run);
        jdbc.update(insert, now - Duration.ofMinutes(10).toMillis(), "recent-" + run);
        String count = "SELECT COUNT(*) FROM dbtasks_server_audit WHERE actor = ?";
        waiting()
                .untilAsserted(() -> assertThat(jdbc.queryForObject(count, Long.class, "old-" + run))
                        .isZero());
        assertThat(jdbc.queryForObject(count, Long.class, "recent-" + run)).isEqualTo(1);
    }

    // --- helpers ---------------------------------------------------------------------------------

    /**
     * Every mapped write endpoint, each verb of a path variable that enumerates verbs on its own;
     * other path variables get an id or name that matches nothing, so the sweep changes no state.
     */
    private List<Call> writeEndpoints() {
        List<Call> calls = new ArrayList<>();
        for (RequestMappingInfo info : mappings.getHandlerMethods().keySet()) {
            for (RequestMethod method : info.getMethodsCondition().getMethods()) {
                if (!WRITES.contains(method.name())) {
                    continue;
                }
                for (String pattern : info.getPatternValues()) {
                    if (pattern.equals("/dashboard/bulk/preview")) {
                        continue;
                    }
                    for (String verb : verbs(pattern)) {
                        StringBuilder path = new StringBuilder();
                        StringBuilder action = new StringBuilder();
                        List<String> targets = new ArrayList<>();
                        Matcher v = VARIABLE.matcher(pattern);
                        int last = 0;
                        while (v.find()) {
                            path.append(pattern, last, v.start());
                            action.append(pattern, last, v.start());
                            if (v.group(2) != null && v.group(2).contains("|")) {
                                path.append(verb);
                                action.append(verb);
                            } else {
                                String value = v.group(1).equals("id") ? NO_ID : "audit-none-" + run;
                                path.append(value);
                                action.append('{').append(v.group(1)).append('}');
                                targets.add(v.group(1) + "=" + value);
                            }
                            last = v.end();
                        }
                        path.append(pattern.substring(last));
                        action.append(pattern.substring(last));
                        calls.add(new Call(method.name(), path.toString(), method.name() + " " + action, targets));
                    }
                }
            }
        }
        return calls;
    }

    private static List<String> verbs(String pattern) {
        Matcher v = VARIABLE.matcher(pattern);
        while (v.find()) {
            if (v.group(2) != null && v.group(2).contains("|")) {
                return List.of(v.group(2).split("\\|"));
            }
        }
        return List.of("");
    }

    private long lastId() {
        JsonNode items = page();
        long max = 0;
        for (JsonNode e : items) {
            max = Math.max(max, e.path("id").asLong());
        }
        return max;
    }

    private JsonNode page() {
        RawHttp.Response r = send("GET", "/api/audit?size=200", RawHttp.basic("admin", "admin-secret"), null);
        assertThat(r.status()).as("admin GET /api/audit: %s", r.body()).isEqualTo(200);
        return json(r).path("items");
    }

    private List<JsonNode> entriesAfter(long id) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode e : page()) {
            if (e.path("id").asLong() > id) {
                out.add(e);
            }
        }
        return out;
    }

    private JsonNode entryById(long id) {
        for (JsonNode e : page()) {
            if (e.path("id").asLong() == id) {
                return e;
            }
        }
        throw new AssertionError("no audit entry " + id);
    }

    private static ConditionFactory waiting() {
        return await().pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(20))
                .atMost(WAIT);
    }

    /** Waits for the request's entry, then checks it is the only one. */
    private JsonNode onlyEntryAfter(long id, String what) {
        waiting().until(() -> !entriesAfter(id).isEmpty());
        List<JsonNode> entries = entriesAfter(id);
        assertThat(entries).as("entries of " + what).hasSize(1);
        return entries.get(0);
    }

    record Session(String cookie, String csrf) {}

    private Session login(String user) {
        RawHttp.Response page = http.send("GET", "/login", Map.of(), null);
        String cookie = sessionCookie(page);
        RawHttp.Response login = http.send(
                "POST",
                "/login",
                Map.of("Cookie", cookie, "Content-Type", "application/x-www-form-urlencoded"),
                ("username=" + user + "&password=" + PASSWORDS.get(user) + "&_csrf=" + csrf(page.body()))
                        .getBytes(StandardCharsets.UTF_8));
        assertThat(login.status()).isEqualTo(302);
        assertThat(login.header("Location")).doesNotContain("error");
        String newCookie = sessionCookie(login);
        RawHttp.Response again = http.send("GET", "/login", Map.of("Cookie", newCookie), null);
        return new Session(newCookie, csrf(again.body()));
    }

    private RawHttp.Response form(Session session, String method, String path, String fields) {
        String body = (fields.isEmpty() ? "" : fields + "&") + "_csrf=" + session.csrf();
        return http.send(
                method,
                path,
                Map.of("Cookie", session.cookie(), "Content-Type", "application/x-www-form-urlencoded"),
                body.getBytes(StandardCharsets.UTF_8));
    }

    private static String sessionCookie(RawHttp.Response r) {
        return r.headers("Set-Cookie").stream()
                .filter(c -> c.startsWith("JSESSIONID="))
                .map(c -> c.substring(0, c.indexOf(';')))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no session cookie in " + r.status() + " " + r.headers()));
    }

    private static String csrf(String html) {
        Matcher m = Pattern.compile("name=\"_csrf\"[^>]*value=\"([^\"]+)\"").matcher(html);
        if (!m.find()) {
            throw new AssertionError("no _csrf field in " + html);
        }
        return m.group(1);
    }

    private RawHttp.Response send(String method, String path, String authorization, String json) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (authorization != null) {
            headers.put("Authorization", authorization);
        }
        if (json != null) {
            headers.put("Content-Type", "application/json");
        }
        return http.send(method, path, headers, json == null ? null : json.getBytes(StandardCharsets.UTF_8));
    }

    private JsonNode json(RawHttp.Response r) {
        return mapper.readTree(r.body());
    }
}
