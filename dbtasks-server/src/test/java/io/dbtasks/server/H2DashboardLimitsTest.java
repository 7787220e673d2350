package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.limit.Limit;
import io.dbtasks.limit.Limits;
import io.dbtasks.limit.Rate;
import io.dbtasks.testing.TestDatabase;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
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

/**
 * The dashboard's limits page on H2: a viewer sees the limits, fair queues and per-key load the core
 * API stored; an operator's form POSTs (with the CSRF token) set a limit and a queue fair, an admin's
 * removes it; a viewer's POST and an operator's removal are refused; input the core refuses is a 400
 * page with the core's message and nothing stored; every POST is in the audit log.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dbtasks.poll-interval=50ms", "dbtasks.server.seed-demo-jobs=false"})
@TestPropertySource(locations = "classpath:test-users.properties")
class H2DashboardLimitsTest {
    private static final String VIEWER = RawHttp.basic("viewer", "viewer-secret");

    @LocalServerPort
    int port;

    @Autowired
    DbTasks dbTasks;

    RawHttp http;
    final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void requireDatabase() {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:dbtasks_server_dashlimits;DB_CLOSE_DELAY=-1");
    }

    @BeforeEach
    void client() {
        http = new RawHttp(port);
    }

    @Test
    void thePageListsLimitsFairQueuesAndTheLoadOfEachKey() {
        String queue = "lim-idle-" + run; // no worker: tasks stay PENDING
        dbTasks.limits().set(new Limit(queue, "tenant-*", 3, false, new Rate(10, Duration.ofSeconds(1))));
        dbTasks.limits().set(Limit.fifo(queue, "ordered"));
        dbTasks.limits().setFair("lim-fair-" + run, true);
        for (int i = 0; i < 3; i++) {
            dbTasks.enqueue(TaskRequest.builder("lim.task")
                    .queue(queue)
                    .concurrencyKey("tenant-a")
                    .build());
        }
        dbTasks.enqueue(TaskRequest.builder("lim.task")
                .queue(queue)
                .concurrencyKey("free")
                .build());

        RawHttp.Response nav = http.send("GET", "/", Map.of("Authorization", VIEWER), null);
        assertThat(nav.body()).contains("id=\"nav-limits\"");
        RawHttp.Response page = http.send("GET", "/dashboard/limits", Map.of("Authorization", VIEWER), null);
        assertThat(page.status()).as(page.body()).isEqualTo(200);
        assertThat(page.body())
                .contains("data-queue=\"" + queue + "\" data-key-pattern=\"tenant-*\"")
                .contains("10 starts per 1s")
                .contains("data-queue=\"" + queue + "\" data-key-pattern=\"ordered\"")
                .contains("data-queue=\"lim-fair-" + run + "\"")
                .contains("id=\"refresh-millis\">" + Limits.REFRESH_MILLIS + "<");
        // A viewer sees the buttons, disabled.
        assertThat(page.body()).containsPattern("id=\"set-limit-submit\"[^>]*disabled");

        RawHttp.Response load =
                http.send("GET", "/dashboard/limits?queue=" + queue, Map.of("Authorization", VIEWER), null);
        assertThat(load.status()).as(load.body()).isEqualTo(200);
        assertThat(load.body())
                .contains("id=\"key-count\">2<")
                .containsPattern("data-key=\"tenant-a\">\\s*<td>tenant-a</td>\\s*<td class=\"num\">0</td>\\s*"
                        + "<td class=\"num\">3</td>\\s*<td>at most 3 running, 10 starts per 1s \\(tenant-\\*\\)</td>")
                .containsPattern("data-key=\"free\">[\\s\\S]*?<td>none</td>");
    }

    @Test
    void anOperatorSetsALimitAndAQueueFairAndOnlyAnAdminRemovesIt() {
        String queue = "lim-set-" + run;
        Session operator = login("operator", "operator-secret");
        RawHttp.Response set = post(
                operator,
                "/dashboard/limits",
                "queue=" + queue + "&keyPattern=" + enc("tenant-*") + "&maxRunning=2&rateStarts=5&ratePeriod=1m");
        assertThat(set.status()).as(set.body()).isEqualTo(302);
        assertThat(set.header("Location")).contains("/dashboard/limits?queue=" + queue);
        assertThat(dbTasks.limits().list())
                .contains(new Limit(queue, "tenant-*", 2, false, new Rate(5, Duration.ofMinutes(1))));

        // FIFO alone is a mutex in enqueue order; the same pattern again replaces the limit.
        RawHttp.Response fifo =
                post(operator, "/dashboard/limits", "queue=" + queue + "&keyPattern=" + enc("tenant-*") + "&fifo=true");
        assertThat(fifo.status()).as(fifo.body()).isEqualTo(302);
        assertThat(dbTasks.limits().list().stream().filter(l -> l.queue().equals(queue)))
                .containsExactly(Limit.fifo(queue, "tenant-*"));
        RawHttp.Response shown =
                http.send("GET", "/dashboard/limits?queue=" + queue, Map.of("Cookie", operator.cookie()), null);
        assertThat(shown.body())
                .contains("Set limit of queue " + queue)
                .doesNotContainPattern("id=\"set-limit-submit\"[^>]*disabled");

        RawHttp.Response fair = post(operator, "/dashboard/limits/fair", "queue=" + queue + "&fair=true");
        assertThat(fair.status()).as(fair.body()).isEqualTo(302);
        assertThat(dbTasks.limits().fairQueues()).contains(queue);
        RawHttp.Response plain = post(operator, "/dashboard/limits/fair", "queue=" + queue + "&fair=false");
        assertThat(plain.status()).as(plain.body()).isEqualTo(302);
        assertThat(dbTasks.limits().fairQueues()).doesNotContain(queue);

        // Removing is a delete: admin's, as DELETE /api/limits is.
        String remove = "queue=" + queue + "&keyPattern=" + enc("tenant-*");
        RawHttp.Response refused = post(operator, "/dashboard/limits/delete", remove);
        assertThat(refused.status()).as(refused.body()).isEqualTo(403);
        assertThat(dbTasks.limits().list()).contains(Limit.fifo(queue, "tenant-*"));
        Session admin = login("admin", "admin-secret");
        RawHttp.Response removed = post(admin, "/dashboard/limits/delete", remove);
        assertThat(removed.status()).as(removed.body()).isEqualTo(302);
        assertThat(dbTasks.limits().list().stream().filter(l -> l.queue().equals(queue)))
                .isEmpty();
        RawHttp.Response again = post(admin, "/dashboard/limits/delete", remove);
        assertThat(again.status()).isEqualTo(404);
        assertThat(again.body()).contains("No limit of queue " + queue + " has the key pattern tenant-*");

        // Each POST is in the audit log.
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(http.send(
                                        "GET",
                                        "/api/audit?size=50",
                                        Map.of("Authorization", RawHttp.basic("admin", "admin-secret")),
                                        null)
                                .body())
                        .contains("\"action\":\"POST /dashboard/limits\"")
                        .contains("\"action\":\"POST /dashboard/limits/fair\"")
                        .contains("\"action\":\"POST /dashboard/limits/delete\""));
    }

    @Test
    void anOperatorSetsAQueueWideRateTheViewerSeesItAndOnlyAnAdminRemovesIt() {
        String queue = "lim-qrate-" + run;
        Session operator = login("operator", "operator-secret");
        RawHttp.Response set =
                post(operator, "/dashboard/limits/queue-rate", "queue=" + queue + "&rateStarts=10&ratePeriod=1s");
        assertThat(set.status()).as(set.body()).isEqualTo(302);
        assertThat(dbTasks.limits().queueRate(queue)).hasValue(new Rate(10, Duration.ofSeconds(1)));
        RawHttp.Response page = http.send("GET", "/dashboard/limits", Map.of("Authorization", VIEWER), null);
        assertThat(page.status()).as(page.body()).isEqualTo(200);
        assertThat(page.body())
                .containsPattern("data-queue=\"" + queue + "\">[\\s\\S]*?<td>10 starts per 1s</td>")
                .containsPattern("id=\"set-queue-rate-submit\"[^>]*disabled");

        // Refused input: a 400 page with the reason, the values kept, nothing stored.
        String other = "lim-qrate-bad-" + run;
        assertRefused(
                post(operator, "/dashboard/limits/queue-rate", "queue=" + other + "&rateStarts=0&ratePeriod=1s"),
                "a rate allows at least 1 start per period, got 0");
        assertRefused(
                post(operator, "/dashboard/limits/queue-rate", "queue=" + other + "&rateStarts=5"),
                "a queue-wide rate needs both rateStarts");
        assertRefused(
                post(operator, "/dashboard/limits/queue-rate", "queue=" + other + "&rateStarts=5&ratePeriod=soon"),
                "ratePeriod must be a duration");
        assertThat(dbTasks.limits().queueRates()).doesNotContainKey(other);
        RawHttp.Response viewerSet = post(
                login("viewer", "viewer-secret"),
                "/dashboard/limits/queue-rate",
                "queue=" + other + "&rateStarts=5&ratePeriod=1s");
        assertThat(viewerSet.status()).isEqualTo(403);

        RawHttp.Response refused = post(operator, "/dashboard/limits/queue-rate/delete", "queue=" + queue);
        assertThat(refused.status()).as(refused.body()).isEqualTo(403);
        assertThat(dbTasks.limits().queueRate(queue)).isPresent();
        Session admin = login("admin", "admin-secret");
        RawHttp.Response removed = post(admin, "/dashboard/limits/queue-rate/delete", "queue=" + queue);
        assertThat(removed.status()).as(removed.body()).isEqualTo(302);
        assertThat(dbTasks.limits().queueRate(queue)).isEmpty();
        RawHttp.Response again = post(admin, "/dashboard/limits/queue-rate/delete", "queue=" + queue);
        assertThat(again.status()).isEqualTo(404);
        assertThat(again.body()).contains("Queue " + queue + " has no queue-wide rate");

        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(http.send(
                                        "GET",
                                        "/api/audit?size=50",
                                        Map.of("Authorization", RawHttp.basic("admin", "admin-secret")),
                                        null)
                                .body())
                        .contains("\"action\":\"POST /dashboard/limits/queue-rate\"")
                        .contains("\"action\":\"POST /dashboard/limits/queue-rate/delete\""));
    }

    @Test
    void aViewersPostAndAPostWithoutTheCsrfTokenAreRefused() {
        String queue = "lim-viewer-" + run;
        Session viewer = login("viewer", "viewer-secret");
        RawHttp.Response set =
                post(viewer, "/dashboard/limits", "queue=" + queue + "&keyPattern=" + enc("*") + "&maxRunning=1");
        assertThat(set.status()).isEqualTo(403);
        RawHttp.Response fair = post(viewer, "/dashboard/limits/fair", "queue=" + queue + "&fair=true");
        assertThat(fair.status()).isEqualTo(403);
        assertThat(dbTasks.limits().list().stream().filter(l -> l.queue().equals(queue)))
                .isEmpty();
        assertThat(dbTasks.limits().fairQueues()).doesNotContain(queue);

        // An operator's POST without the CSRF token is refused too.
        Session operator = login("operator", "operator-secret");
        RawHttp.Response noToken = http.send(
                "POST",
                "/dashboard/limits",
                Map.of("Cookie", operator.cookie(), "Content-Type", "application/x-www-form-urlencoded"),
                ("queue=" + queue + "&keyPattern=k&maxRunning=1").getBytes(StandardCharsets.UTF_8));
        assertThat(noToken.status()).isEqualTo(403);
        assertThat(dbTasks.limits().list().stream().filter(l -> l.queue().equals(queue)))
                .isEmpty();
    }

    @Test
    void inputTheCoreRefusesIsA400WithItsMessageAndStoresNothing() {
        String queue = "lim-bad-" + run;
        Session operator = login("operator", "operator-secret");
        assertRefused(
                post(operator, "/dashboard/limits", "queue=" + queue + "&keyPattern=k&maxRunning=0"),
                "maxRunning must be at least 1 (1 is a mutex), got 0");
        assertRefused(
                post(operator, "/dashboard/limits", "queue=" + enc("  ") + "&keyPattern=k&maxRunning=2"),
                "queue must be 1 to 200 characters and not blank");
        assertRefused(
                post(operator, "/dashboard/limits", "queue=" + queue + "&keyPattern=k&maxRunning=2&fifo=true"),
                "a FIFO limit runs one task of a key at a time: maxRunning must be 1, got 2");
        assertRefused(
                post(operator, "/dashboard/limits", "queue=" + queue + "&keyPattern=k&rateStarts=0&ratePeriod=1s"),
                "a rate allows at least 1 start per period, got 0");
        assertRefused(
                post(operator, "/dashboard/limits", "queue=" + queue + "&keyPattern=k&maxRunning=two"),
                "maxRunning must be a whole number, got &#39;two&#39;");
        assertRefused(
                post(operator, "/dashboard/limits", "queue=" + queue + "&keyPattern=k"),
                "give maxRunning (at least 1), FIFO, or a rate");
        assertRefused(
                post(operator, "/dashboard/limits/fair", "queue=&fair=true"),
                "queue must be 1 to 200 characters and not blank");
        assertThat(dbTasks.limits().list().stream().filter(l -> l.queue().equals(queue)))
                .isEmpty();
        // The refused values stay in the form.
        RawHttp.Response kept = post(operator, "/dashboard/limits", "queue=" + queue + "&keyPattern=k&maxRunning=0");
        assertThat(kept.body()).contains("value=\"" + queue + "\"").contains("value=\"0\"");
    }

    private static void assertRefused(RawHttp.Response r, String message) {
        assertThat(r.status()).as(r.body()).isEqualTo(400);
        assertThat(r.body()).contains("id=\"error-message\"").contains(message);
    }

    // --- helpers ---------------------------------------------------------------------------------

    record Session(String cookie, String csrf) {}

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private RawHttp.Response post(Session session, String path, String form) {
        return http.send(
                "POST",
                path,
                Map.of("Cookie", session.cookie(), "Content-Type", "application/x-www-form-urlencoded"),
                (form + "&_csrf=" + session.csrf()).getBytes(StandardCharsets.UTF_8));
    }

    private Session login(String user, String password) {
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
        RawHttp.Response again = http.send("GET", "/login", Map.of("Cookie", newCookie), null);
        return new Session(newCookie, csrf(again.body()));
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
}
