package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The server's exposure, run once per database by the subclasses: health shows anonymous callers
 * its status only and nobody raw database error text; every mapped endpoint needs the role of its
 * action (running a job definition needs admin on every path); the {@code Idempotency-Key} header's
 * edge cases (two headers, a replay's {@code Warning}); a batch's {@code Location} ignores the
 * {@code Host} header; the favicon; an unknown dashboard page is an HTML page.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.poll-interval=50ms",
            "dbtasks.server.seed-demo-jobs=false",
            "spring.datasource.hikari.maximum-pool-size=6"
        })
@TestPropertySource(locations = "classpath:test-users.properties")
@DirtiesContext
abstract class SecurityHardeningContract {
    static final String ADMIN = RawHttp.basic("admin", "admin-secret");
    static final String OPERATOR = RawHttp.basic("operator", "operator-secret");
    static final String VIEWER = RawHttp.basic("viewer", "viewer-secret");

    @LocalServerPort
    int port;

    @Autowired
    JsonMapper mapper;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    RawHttp http;
    final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void client() {
        http = new RawHttp(port);
    }

    // --- health ----------------------------------------------------------------------------------

    @Test
    void anonymousHealthIsStatusOnlyAndViewersSeeTheDetails() {
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        http.send("GET", "/actuator/health", Map.of(), null).status() == 200);
        JsonNode anonymous = json(http.send("GET", "/actuator/health", Map.of(), null));
        // The status, and the names of the probe groups (liveness, readiness) at most.
        assertThat(names(anonymous)).as("anonymous health: %s", anonymous).contains("status");
        assertThat(names(anonymous)).as("anonymous health: %s", anonymous).isSubsetOf("status", "groups");
        assertThat(anonymous.path("status").asString()).isEqualTo("UP");

        for (String auth : List.of(VIEWER, OPERATOR, ADMIN)) {
            JsonNode details = json(http.send("GET", "/actuator/health", Map.of("Authorization", auth), null));
            assertThat(details.path("components")
                            .path("dbtasks")
                            .path("details")
                            .path("workerId")
                            .isString())
                    .as("health of an authenticated reader: %s", details)
                    .isTrue();
        }
    }

    @Test
    void healthNeverShowsRawDatabaseErrorText() {
        jdbc.execute("ALTER TABLE dbtasks_task RENAME TO dbtasks_task_away");
        try {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> http.send("GET", "/actuator/health", Map.of("Authorization", ADMIN), null)
                            .body()
                            .contains("lastFailure"));
            for (String auth : new String[] {null, VIEWER, ADMIN}) {
                Map<String, String> headers = auth == null ? Map.of() : Map.of("Authorization", auth);
                RawHttp.Response r = http.send("GET", "/actuator/health", headers, null);
                String body = r.body().toLowerCase(Locale.ROOT);
                assertThat(body)
                        .as("health as %s", auth == null ? "anonymous" : auth)
                        .doesNotContain("dbtasks_task", "relation", "table", "select", "exception", "sql state");
            }
            JsonNode details = json(http.send("GET", "/actuator/health", Map.of("Authorization", VIEWER), null))
                    .path("components")
                    .path("dbtasks")
                    .path("details");
            assertThat(details.path("lastFailure").asString())
                    .as("sanitized reason in %s", details)
                    .contains("SQLState");
        } finally {
            jdbc.execute("ALTER TABLE dbtasks_task_away RENAME TO dbtasks_task");
        }
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        http.send("GET", "/actuator/health", Map.of(), null).status() == 200);
    }

    // --- one role per action ---------------------------------------------------------------------

    @Test
    void runningJobDefinitionsNeedsAdminOnEveryPath() {
        String body = "{\"codes\":[\"no-such-job-" + run + "\"]}";
        RawHttp.Response operator = send("POST", "/api/job-runs", OPERATOR, body);
        assertThat(operator.status()).as(operator.body()).isEqualTo(403);
        assertThat(send("POST", "/api/jobs/no-such-job-" + run + "/runs", OPERATOR, null)
                        .status())
                .isEqualTo(403);
        assertThat(send("POST", "/api/job-runs", ADMIN, body).status()).isNotIn(401, 403);
        assertThat(send("POST", "/api/jobs/no-such-job-" + run + "/runs", ADMIN, null)
                        .status())
                .isNotIn(401, 403);
        // Nor as a task of the engine's own job kind, which would call any allow-listed target.
        String forged = "{\"kind\":\"dbtasks.job\",\"payload\":{\"code\":\"forged\",\"runNo\":1,"
                + "\"bean\":\"orderService\",\"method\":\"noParamTask\",\"parameterTypes\":[],\"arguments\":\"[]\"}}";
        for (String auth : List.of(OPERATOR, ADMIN)) {
            RawHttp.Response r = send("POST", "/api/tasks", auth, forged);
            assertThat(r.status()).as(r.body()).isEqualTo(400);
            assertThat(r.body()).contains("the engine's own");
        }
    }

    /**
     * Every mapped endpoint, for each role: refused (403) below the role its action needs, past
     * security above it. The needed role is stated here per kind of action, so a new endpoint
     * that falls outside the rules fails this test.
     */
    @Test
    void everyEndpointNeedsTheRoleOfItsAction() {
        Map<String, Session> sessions = new LinkedHashMap<>();
        for (String role : List.of("viewer", "operator", "admin")) {
            sessions.put(role, login(role, role + "-secret"));
        }
        List<String> checked = new ArrayList<>();
        for (RequestMappingInfo info : mappings.getHandlerMethods().keySet()) {
            Set<RequestMethod> methods = info.getMethodsCondition().getMethods();
            for (String pattern : info.getPatternValues()) {
                if (pattern.equals("/login") || pattern.equals("/error")) {
                    continue; // everyone's
                }
                for (String path : concrete(pattern)) {
                    for (String method : methods.isEmpty()
                            ? List.of("GET", "POST")
                            : methods.stream().map(Enum::name).toList()) {
                        String needed = neededRole(method, path);
                        for (Map.Entry<String, Session> role : sessions.entrySet()) {
                            RawHttp.Response r = path.startsWith("/api/")
                                    ? send(method, path, RawHttp.basic(role.getKey(), role.getKey() + "-secret"), "{}")
                                    : sendForm(method, path, role.getValue());
                            boolean allowed = rank(role.getKey()) >= rank(needed);
                            if (allowed) {
                                assertThat(r.status())
                                        .as("%s %s as %s (needs %s): %s", method, path, role.getKey(), needed, r.body())
                                        .isNotIn(401, 403);
                            } else {
                                assertThat(r.status())
                                        .as("%s %s as %s (needs %s)", method, path, role.getKey(), needed)
                                        .isEqualTo(403);
                            }
                        }
                        checked.add(method + " " + path);
                    }
                }
            }
        }
        assertThat(checked).contains("POST /api/job-runs", "POST /dashboard/definitions/no-such-job/run");
    }

    /** The role an action needs, as the README states it. */
    private static String neededRole(String method, String path) {
        if (path.startsWith("/api/audit") || path.startsWith("/dashboard/audit")) {
            return "admin";
        }
        if (method.equals("GET") || method.equals("HEAD")) {
            return "viewer";
        }
        if (method.equals("DELETE")
                || path.endsWith("/delete")
                || path.contains("action=delete")
                || path.startsWith("/api/jobs")
                || path.startsWith("/api/job-runs")
                || path.startsWith("/dashboard/schedules/")
                || path.startsWith("/dashboard/definitions/")) {
            return "admin";
        }
        return "operator";
    }

    private static int rank(String role) {
        return List.of("viewer", "operator", "admin").indexOf(role);
    }

    /** A path of the pattern per alternative of a {@code {name:a|b}} variable, with ids that match nothing. */
    private static List<String> concrete(String pattern) {
        Matcher alternatives = Pattern.compile("\\{[a-zA-Z]+:([a-z|-]+)}").matcher(pattern);
        List<String> out = new ArrayList<>();
        if (alternatives.find()) {
            for (String a : alternatives.group(1).split("\\|")) {
                out.addAll(concrete(
                        pattern.substring(0, alternatives.start()) + a + pattern.substring(alternatives.end())));
            }
            return out;
        }
        String path = pattern.replaceAll("\\{id}", "987654321").replaceAll("\\{[^}]+}", "no-such-job");
        out.add(path);
        if (path.startsWith("/dashboard/bulk") && !path.equals("/dashboard/bulk/987654321")) {
            out.set(0, path + "?action=retry&id=987654321");
            out.add(path + "?action=delete&id=987654321");
        }
        return out;
    }

    // --- Idempotency-Key -------------------------------------------------------------------------

    @Test
    void twoIdempotencyKeyHeadersAre400() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", OPERATOR);
        headers.put("Content-Type", "application/json");
        headers.put("Idempotency-Key", "one-" + run);
        headers.put("idempotency-key", "two-" + run); // a second header line: the names differ in case only
        RawHttp.Response r = http.send(
                "POST",
                "/api/tasks",
                headers,
                ("{\"kind\":\"order.no-param\",\"queue\":\"two-keys-" + run + "\"}").getBytes(StandardCharsets.UTF_8));
        assertThat(r.status()).as(r.body()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(json(r).path("detail").asString()).contains("one Idempotency-Key");
        assertThat(json(send("GET", "/api/tasks?queue=two-keys-" + run, OPERATOR, null))
                        .path("total")
                        .asLong())
                .isZero();
    }

    @Test
    void aReplayKeepsTheWarningHeader() {
        String body = "{\"kind\":\"order.no-param\",\"queue\":\"nobody-serves-" + run + "\"}";
        RawHttp.Response first = sendKeyed("/api/tasks", "w-" + run, body);
        RawHttp.Response replay = sendKeyed("/api/tasks", "w-" + run, body);
        assertThat(first.status()).isEqualTo(201);
        assertThat(first.header("Warning")).contains("No live instance serves queue");
        assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(replay.header("Warning")).isEqualTo(first.header("Warning"));
        assertThat(replay.header("Location")).isEqualTo(first.header("Location"));
    }

    // --- smaller findings ------------------------------------------------------------------------

    @Test
    void batchLocationDoesNotEchoTheHostHeader() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", OPERATOR);
        headers.put("Content-Type", "application/json");
        headers.put("Host", "evil.example:666");
        headers.put("X-Forwarded-Host", "evil.example");
        RawHttp.Response created = http.send(
                "POST",
                "/api/batches",
                headers,
                ("{\"kind\":\"orders.sync\",\"chunks\":1,\"params\":{\"ordersPerChunk\":1},\"idempotencyKey\":\"loc-"
                                + run + "\"}")
                        .getBytes(StandardCharsets.UTF_8));
        assertThat(created.status()).as(created.body()).isEqualTo(201);
        assertThat(created.header("Location"))
                .doesNotContain("evil")
                .isEqualTo("/api/batches/" + json(created).path("id").asLong());
    }

    @Test
    void theFaviconIsServed() {
        RawHttp.Response r = http.send("GET", "/favicon.ico", Map.of(), null);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.contentType()).startsWith("image/");
        assertThat(r.bytes()).isNotEmpty();
    }

    @Test
    void anUnknownDashboardPageIsAnHtmlPage() {
        Session viewer = login("viewer", "viewer-secret");
        RawHttp.Response r = http.send(
                "GET",
                "/dashboard/no-such-page",
                Map.of("Cookie", viewer.cookie(), "Accept", "text/html,application/xhtml+xml,*/*;q=0.8"),
                null);
        assertThat(r.status()).isEqualTo(404);
        assertThat(r.contentType()).startsWith("text/html");
        assertThat(r.body()).contains("<html", "Not found").doesNotContain("\"status\"");
        // API clients keep problem+json.
        RawHttp.Response api = send("GET", "/api/no-such-thing", VIEWER, null);
        assertThat(api.status()).isEqualTo(404);
        assertThat(api.contentType()).startsWith("application/problem+json");
    }

    @Test
    void aRefusalIsAnHtmlPageForBrowsersAndProblemJsonForClients() {
        Session operator = login("operator", "operator-secret");
        RawHttp.Response page =
                http.send("GET", "/actuator/dbtasks", Map.of("Cookie", operator.cookie(), "Accept", "text/html"), null);
        assertThat(page.status()).isEqualTo(403);
        assertThat(page.contentType()).startsWith("text/html");
        assertThat(page.body()).contains("Not allowed for your role");
        RawHttp.Response api = send("POST", "/api/job-runs", OPERATOR, "{\"failed\":true}");
        assertThat(api.status()).isEqualTo(403);
        assertThat(api.contentType()).startsWith("application/problem+json");
    }

    // --- helpers ---------------------------------------------------------------------------------

    record Session(String cookie, String csrf) {}

    Session login(String user, String password) {
        RawHttp.Response page = http.send("GET", "/login", Map.of(), null);
        String cookie = sessionCookie(page);
        RawHttp.Response login = http.send(
                "POST",
                "/login",
                Map.of("Cookie", cookie, "Content-Type", "application/x-www-form-urlencoded"),
                ("username=" + user + "&password=" + password + "&_csrf=" + csrf(page.body()))
                        .getBytes(StandardCharsets.UTF_8));
        assertThat(login.status()).isEqualTo(302);
        assertThat(login.header("Location")).doesNotContain("error");
        String newCookie = sessionCookie(login);
        return new Session(
                newCookie,
                csrf(http.send("GET", "/login", Map.of("Cookie", newCookie), null)
                        .body()));
    }

    private RawHttp.Response sendForm(String method, String path, Session session) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Cookie", session.cookie());
        headers.put("X-CSRF-TOKEN", session.csrf());
        headers.put("Accept", "application/json");
        return http.send(method, path, headers, null);
    }

    static String sessionCookie(RawHttp.Response r) {
        return r.headers("Set-Cookie").stream()
                .filter(c -> c.startsWith("JSESSIONID="))
                .map(c -> c.substring(0, c.indexOf(';')))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no session cookie in " + r.status() + " " + r.headers()));
    }

    static String csrf(String html) {
        Matcher m = Pattern.compile("name=\"_csrf\"[^>]*value=\"([^\"]+)\"").matcher(html);
        if (!m.find()) {
            throw new AssertionError("no _csrf field in " + html);
        }
        return m.group(1);
    }

    private RawHttp.Response sendKeyed(String path, String key, String json) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", OPERATOR);
        headers.put("Content-Type", "application/json");
        headers.put("Idempotency-Key", key);
        return http.send("POST", path, headers, json.getBytes(StandardCharsets.UTF_8));
    }

    RawHttp.Response send(String method, String path, String authorization, String json) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (authorization != null) {
            headers.put("Authorization", authorization);
        }
        if (json != null) {
            headers.put("Content-Type", "application/json");
        }
        return http.send(method, path, headers, json == null ? null : json.getBytes(StandardCharsets.UTF_8));
    }

    JsonNode json(RawHttp.Response r) {
        return mapper.readTree(r.body());
    }

    private static List<String> names(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.propertyNames().forEach(names::add);
        return names;
    }
}
