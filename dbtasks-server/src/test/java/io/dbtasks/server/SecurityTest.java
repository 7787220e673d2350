package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Who may do what, on H2: each role's allowed and refused actions over HTTP basic and bearer tokens,
 * every mapped endpoint refused to an anonymous caller except the login page and health, CSRF
 * refusal of a session's form POST, payloads and stack traces hidden from viewers, security headers.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.poll-interval=50ms",
            "dbtasks.default-retry.initial=100ms",
            "dbtasks.default-retry.backoff=fixed",
            "dbtasks.server.security.hide-payloads-from-viewers=true",
            "dbtasks.server.seed-demo-jobs=false"
        })
@TestPropertySource(locations = "classpath:test-users.properties")
class SecurityTest {
    private static final String ADMIN = RawHttp.basic("admin", "admin-secret");
    private static final String OPERATOR = RawHttp.basic("operator", "operator-secret");
    private static final String VIEWER = RawHttp.basic("viewer", "viewer-secret");

    @LocalServerPort
    int port;

    @Autowired
    JsonMapper mapper;

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    RawHttp http;
    final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void requireDatabase() {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:dbtasks_server_security;DB_CLOSE_DELAY=-1");
    }

    @BeforeEach
    void client() {
        http = new RawHttp(port);
    }

    @Test
    void anonymousReachesOnlyTheLoginPageAndHealth() {
        List<String> checked = new ArrayList<>();
        for (RequestMappingInfo info : mappings.getHandlerMethods().keySet()) {
            Set<String> patterns = info.getPatternValues();
            Set<org.springframework.web.bind.annotation.RequestMethod> methods =
                    info.getMethodsCondition().getMethods();
            for (String pattern : patterns) {
                if (pattern.equals("/login")) {
                    continue; // the one page for everyone, checked below
                }
                String path = pattern.replaceAll("\\{[^}]*\\*[^}]*}", "x").replaceAll("\\{[^}]+}", "1");
                for (String method : methods.isEmpty()
                        ? List.of("GET", "POST")
                        : methods.stream().map(Enum::name).toList()) {
                    RawHttp.Response r = send(method, path, null, null);
                    if (method.equals("GET") || path.startsWith("/api/")) {
                        assertThat(r.status())
                                .as("%s %s anonymously", method, path)
                                .isEqualTo(401);
                        assertThat(r.header("WWW-Authenticate")).contains("Basic", "Bearer");
                    } else {
                        // A form POST outside /api meets the CSRF check first.
                        assertThat(r.status())
                                .as("%s %s anonymously", method, path)
                                .isIn(401, 403);
                    }
                    assertProblem(r, r.status());
                    checked.add(method + " " + path);
                }
            }
        }
        assertThat(checked).contains("GET /api/tasks", "POST /api/tasks", "GET /v3/api-docs");
        for (String path : List.of("/", "/error", "/api/nothing-here", "/swagger-ui.html", "/actuator/metrics")) {
            assertThat(send("GET", path, null, null).status()).as(path).isEqualTo(401);
        }
        // A browser is sent to the login page.
        RawHttp.Response browser = http.send("GET", "/", Map.of("Accept", "text/html"), null);
        assertThat(browser.status()).isEqualTo(302);
        assertThat(browser.header("Location")).endsWith("/login");
        assertThat(http.send("GET", "/login", Map.of(), null).status()).isEqualTo(200);
    }

    @Test
    void viewerReadsButIsRefusedEveryAction() {
        long id = createAs(ADMIN, "sec-" + run).path("id").asLong();
        assertThat(send("GET", "/api/tasks", VIEWER, null).status()).isEqualTo(200);
        assertThat(send("GET", "/api/tasks/" + id, VIEWER, null).status()).isEqualTo(200);
        assertThat(send("GET", "/api/tasks/" + id + "/attempts", VIEWER, null).status())
                .isEqualTo(200);
        assertThat(send("GET", "/api/stats", VIEWER, null).status()).isEqualTo(200);
        assertThat(send("GET", "/v3/api-docs", VIEWER, null).status()).isEqualTo(200);
        for (String[] action : List.of(
                new String[] {"POST", "/api/tasks"},
                new String[] {"POST", "/api/tasks/" + id + "/retry"},
                new String[] {"POST", "/api/tasks/" + id + "/cancel"},
                new String[] {"POST", "/api/tasks/run?key=x"},
                new String[] {"DELETE", "/api/tasks/" + id},
                new String[] {"POST", "/api/jobs"},
                new String[] {"PUT", "/api/schedules/1"})) {
            RawHttp.Response r = send(action[0], action[1], VIEWER, "{\"kind\":\"order.no-param\"}");
            assertThat(r.status()).as("viewer %s %s", action[0], action[1]).isEqualTo(403);
            assertProblem(r, 403);
        }
        assertThat(json(send("GET", "/api/tasks/" + id, ADMIN, null))
                        .path("status")
                        .asString())
                .isEqualTo("PENDING");
    }

    @Test
    void operatorActsOnTasksButIsRefusedDefinitionsSchedulesAndDeletes() {
        RawHttp.Response created = send(
                "POST",
                "/api/tasks",
                OPERATOR,
                "{\"kind\":\"order.sync\",\"queue\":\"sec-" + run
                        + "\",\"payload\":{\"orderId\":1,\"operator\":\"o\"},\"idempotencyKey\":\"sec-op-" + run
                        + "\"}");
        assertThat(created.status()).isEqualTo(201);
        long id = json(created).path("id").asLong();
        assertThat(send("POST", "/api/tasks/run?key=sec-op-" + run, OPERATOR, null)
                        .status())
                .isEqualTo(200);
        assertThat(send("POST", "/api/tasks/" + id + "/cancel", OPERATOR, null).status())
                .isEqualTo(200);
        assertThat(send("POST", "/api/tasks/" + id + "/retry", OPERATOR, null).status())
                .isEqualTo(200);
        for (String[] action : List.of(
                new String[] {"DELETE", "/api/tasks/" + id},
                new String[] {"POST", "/api/tasks/" + id + "/delete"},
                new String[] {"POST", "/api/jobs"},
                new String[] {"PATCH", "/api/jobs/x"},
                new String[] {"POST", "/api/schedules/x/pause"},
                new String[] {"GET", "/actuator/env"})) {
            RawHttp.Response r = send(action[0], action[1], OPERATOR, "{}");
            assertThat(r.status()).as("operator %s %s", action[0], action[1]).isEqualTo(403);
            assertProblem(r, 403);
        }
        // The admin passes the role check on the same paths: past security, the endpoint answers
        // (200 for the deleted task, 400 for the empty definition sent to POST /api/jobs).
        for (String[] action :
                List.of(new String[] {"DELETE", "/api/tasks/" + id}, new String[] {"POST", "/api/jobs"})) {
            RawHttp.Response r = send(action[0], action[1], ADMIN, "{}");
            assertThat(r.status()).as("admin %s %s", action[0], action[1]).isIn(200, 400);
            if (r.status() != 200) {
                assertProblem(r, r.status());
            }
        }
    }

    @Test
    void wrongCredentialsAndTokensAre401AndTokensWork() {
        assertThat(send("GET", "/api/stats", RawHttp.basic("admin", "wrong"), null)
                        .status())
                .isEqualTo(401);
        assertThat(send("GET", "/api/stats", RawHttp.basic("nobody", "x"), null).status())
                .isEqualTo(401);
        RawHttp.Response badToken = send("GET", "/api/stats", "Bearer not-a-token", null);
        assertThat(badToken.status()).isEqualTo(401);
        assertProblem(badToken, 401);
        assertThat(send("GET", "/api/stats", "Bearer operator-token-0123456789abcdef", null)
                        .status())
                .isEqualTo(200);
        assertThat(send(
                                "POST",
                                "/api/tasks",
                                "Bearer operator-token-0123456789abcdef",
                                "{\"kind\":\"order.no-param\",\"queue\":\"sec-" + run + "\"}")
                        .status())
                .isEqualTo(201);
        // The API keeps no session: no cookie is set.
        assertThat(send("GET", "/api/stats", OPERATOR, null).headers("Set-Cookie"))
                .isEmpty();
    }

    @Test
    void payloadsAndStackTracesAreHiddenFromViewersWhenConfigured() {
        long id = createAs(ADMIN, "sec-hide-" + run).path("id").asLong();
        assertThat(json(send("GET", "/api/tasks/" + id, VIEWER, null))
                        .path("payload")
                        .isNull())
                .isTrue();
        assertThat(json(send("GET", "/api/tasks?queue=sec-hide-" + run, VIEWER, null))
                        .path("items")
                        .get(0)
                        .path("payload")
                        .isNull())
                .isTrue();
        assertThat(json(send("GET", "/api/tasks/" + id, OPERATOR, null))
                        .path("payload")
                        .path("orderId")
                        .asInt())
                .isEqualTo(9);

        RawHttp.Response flaky = send(
                "POST",
                "/api/tasks",
                ADMIN,
                "{\"kind\":\"demo.flaky\",\"payload\":{\"failTimes\":5},\"maxAttempts\":1}");
        long failing = json(flaky).path("id").asLong();
        org.awaitility.Awaitility.await()
                .atMost(java.time.Duration.ofSeconds(30))
                .until(() -> "FAILED"
                        .equals(json(send("GET", "/api/tasks/" + failing, ADMIN, null))
                                .path("status")
                                .asString()));
        JsonNode asViewer = json(send("GET", "/api/tasks/" + failing + "/attempts", VIEWER, null));
        JsonNode asOperator = json(send("GET", "/api/tasks/" + failing + "/attempts", OPERATOR, null));
        assertThat(asOperator.get(0).path("stackTrace").asString()).contains("demo.flaky");
        assertThat(asViewer.get(0).path("stackTrace").isNull()).isTrue();
    }

    @Test
    void formPostWithoutCsrfTokenIsRefusedAndLoginWorksWithIt() {
        // Without the token, even the login form is refused.
        RawHttp.Response noToken = http.send(
                "POST",
                "/login",
                Map.of("Content-Type", "application/x-www-form-urlencoded"),
                "username=admin&password=admin-secret".getBytes(StandardCharsets.UTF_8));
        assertThat(noToken.status()).isEqualTo(403);
        assertProblem(noToken, 403);
        assertThat(json(noToken).path("detail").asString()).contains("CSRF");

        Session session = login("operator", "operator-secret");
        assertThat(http.send("GET", "/v3/api-docs", Map.of("Cookie", session.cookie), null)
                        .status())
                .isEqualTo(200);
        // A form POST of the session without the token: 403, whatever the path.
        RawHttp.Response refused = http.send(
                "POST",
                "/tasks/1/retry",
                Map.of("Cookie", session.cookie, "Content-Type", "application/x-www-form-urlencoded"),
                "x=1".getBytes(StandardCharsets.UTF_8));
        assertThat(refused.status()).isEqualTo(403);
        assertThat(json(refused).path("detail").asString()).contains("CSRF");
        // With the token it passes the CSRF check (and finds no such page: 404).
        RawHttp.Response accepted = http.send(
                "POST",
                "/tasks/1/retry",
                Map.of("Cookie", session.cookie, "Content-Type", "application/x-www-form-urlencoded"),
                ("_csrf=" + session.csrf).getBytes(StandardCharsets.UTF_8));
        assertThat(accepted.status()).isEqualTo(404);
        // The API chain ignores the session cookie: it is stateless.
        assertThat(http.send("GET", "/api/stats", Map.of("Cookie", session.cookie), null)
                        .status())
                .isEqualTo(401);
    }

    @Test
    void securityHeadersAreSent() {
        for (RawHttp.Response r :
                List.of(send("GET", "/api/stats", VIEWER, null), http.send("GET", "/login", Map.of(), null))) {
            assertThat(r.header("Content-Security-Policy"))
                    .contains("script-src 'self'", "frame-ancestors 'none'")
                    .doesNotContain("unsafe-eval")
                    .doesNotContain("script-src 'self' 'unsafe-inline'");
            assertThat(r.header("X-Frame-Options")).isEqualTo("DENY");
            assertThat(r.header("X-Content-Type-Options")).isEqualTo("nosniff");
            assertThat(r.header("Referrer-Policy")).isEqualTo("same-origin");
        }
    }

    // --- helpers ---------------------------------------------------------------------------------

    record Session(String cookie, String csrf) {}

    private Session login(String user, String password) {
        RawHttp.Response page = http.send("GET", "/login", Map.of(), null);
        String cookie = sessionCookie(page);
        String csrf = csrf(page.body());
        RawHttp.Response login = http.send(
                "POST",
                "/login",
                Map.of("Cookie", cookie, "Content-Type", "application/x-www-form-urlencoded"),
                ("username=" + user + "&password=" + password + "&_csrf=" + csrf).getBytes(StandardCharsets.UTF_8));
        assertThat(login.status()).isEqualTo(302);
        assertThat(login.header("Location")).doesNotContain("error");
        String newCookie = sessionCookie(login);
        RawHttp.Response loginPageAgain = http.send("GET", "/login", Map.of("Cookie", newCookie), null);
        return new Session(newCookie, csrf(loginPageAgain.body()));
    }

    private static String sessionCookie(RawHttp.Response r) {
        return r.headers("Set-Cookie").stream()
                .filter(c -> c.startsWith("JSESSIONID="))
                .map(c -> c.substring(0, c.indexOf(';')))
                .findFirst()
                .orElseThrow(
                        () -> new AssertionError("no session cookie in " + r.status() + " " + r.headers() + r.body()));
    }

    private static String csrf(String html) {
        Matcher m = Pattern.compile("name=\"_csrf\"[^>]*value=\"([^\"]+)\"").matcher(html);
        if (!m.find()) {
            throw new AssertionError("no _csrf field in " + html);
        }
        return m.group(1);
    }

    private JsonNode createAs(String auth, String queue) {
        RawHttp.Response r = send(
                "POST",
                "/api/tasks",
                auth,
                "{\"kind\":\"order.sync\",\"queue\":\"" + queue + "\",\"payload\":{\"orderId\":9,\"operator\":\"o\"}}");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        return json(r);
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

    private void assertProblem(RawHttp.Response r, int status) {
        assertThat(r.contentType()).as("content type of %s", r.status()).startsWith("application/problem+json");
        assertThat(json(r).path("status").asInt()).isEqualTo(status);
        assertThat(r.body()).doesNotContain("java.", "tools.jackson", "org.springframework");
    }
}
