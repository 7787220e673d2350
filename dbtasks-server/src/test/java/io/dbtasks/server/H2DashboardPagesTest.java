package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.batch.Batch;
import io.dbtasks.batch.BatchRequest;
import io.dbtasks.job.JobDefinition;
import io.dbtasks.job.JobTarget;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.Trigger;
import io.dbtasks.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 * The dashboard's schedules, job definitions and batches pages on H2: a viewer sees what the core
 * API stored, an admin's session pauses a schedule through the page's form POST (with its CSRF
 * token), and an operator's same POST is refused with the schedule unchanged.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.poll-interval=50ms",
            "dbtasks.server.seed-demo-jobs=false",
            "dbtasks.rescue-interval=1h" // an expired lease stays visible until the test looks
        })
@TestPropertySource(locations = "classpath:test-users.properties")
class H2DashboardPagesTest {
    private static final String VIEWER = RawHttp.basic("viewer", "viewer-secret");

    @LocalServerPort
    int port;

    @Autowired
    DbTasks dbTasks;

    @Autowired
    javax.sql.DataSource dataSource;

    RawHttp http;
    final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void requireDatabase() {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:dbtasks_server_dashpages;DB_CLOSE_DELAY=-1");
    }

    @BeforeEach
    void client() {
        http = new RawHttp(port);
    }

    @Test
    void theThreePagesShowWhatTheCoreApiStoredAndOnlyAnAdminPausesASchedule() {
        String schedule = "dash-schedule-" + run;
        dbTasks.schedules().create(Schedule.of(schedule, Trigger.cron("0 0 3 * * *"), "dash.report-" + run));
        String code = "dash-job-" + run;
        dbTasks.jobs()
                .create(JobDefinition.builder(code)
                        .name("Dash job " + run)
                        .business("dash-type-" + run, "DASH-1")
                        .target(JobTarget.of("orderService", "syncOrder", "java.lang.Long", "java.lang.String"))
                        .arguments("[1, \"dash\"]")
                        .queue("dash-" + run)
                        .enabled(true)
                        .build());
        Batch batch = dbTasks.batches()
                .create(BatchRequest.builder("dash.batch-" + run, 3)
                        .name("dash-batch-" + run)
                        .queue("dash-idle-" + run)
                        .build());

        RawHttp.Response schedules = http.send("GET", "/dashboard/schedules", Map.of("Authorization", VIEWER), null);
        assertThat(schedules.status()).as(schedules.body()).isEqualTo(200);
        assertThat(schedules.body())
                .contains(schedule)
                .contains("cron 0 0 3 * * *")
                .contains("running");
        // A viewer sees the buttons, disabled.
        assertThat(schedules.body()).containsPattern("id=\"pause-" + schedule + "\"[^>]*disabled");

        RawHttp.Response definitions =
                http.send("GET", "/dashboard/definitions", Map.of("Authorization", VIEWER), null);
        assertThat(definitions.status()).as(definitions.body()).isEqualTo(200);
        assertThat(definitions.body())
                .contains(code)
                .contains("Dash job " + run)
                .contains("orderService.syncOrder");

        RawHttp.Response batches = http.send("GET", "/dashboard/batches", Map.of("Authorization", VIEWER), null);
        assertThat(batches.status()).as(batches.body()).isEqualTo(200);
        assertThat(batches.body())
                .contains("dash-batch-" + run)
                .contains("dash.batch-" + run)
                .contains("<progress")
                .contains("data-batch=\"" + batch.id() + "\"");

        // An operator's session POST (valid CSRF token) is refused: schedules are admin's.
        Session operator = login("operator", "operator-secret");
        RawHttp.Response refused = post(operator, "/dashboard/schedules/" + schedule + "/pause");
        assertThat(refused.status()).as(refused.body()).isEqualTo(403);
        assertThat(dbTasks.schedules().find(schedule).orElseThrow().paused()).isFalse();

        // The admin's page has the enabled button; its POST pauses the schedule.
        Session admin = login("admin", "admin-secret");
        RawHttp.Response page = http.send("GET", "/dashboard/schedules", Map.of("Cookie", admin.cookie()), null);
        assertThat(page.body()).doesNotContainPattern("id=\"pause-" + schedule + "\"[^>]*disabled");
        RawHttp.Response paused = post(admin, "/dashboard/schedules/" + schedule + "/pause");
        assertThat(paused.status()).as(paused.body()).isEqualTo(302);
        assertThat(paused.header("Location")).endsWith("/dashboard/schedules");
        assertThat(dbTasks.schedules().find(schedule).orElseThrow().paused()).isTrue();
        assertThat(http.send("GET", "/dashboard/schedules", Map.of("Cookie", admin.cookie()), null)
                        .body())
                .contains("id=\"resume-" + schedule + "\"");
    }

    @Test
    void aTaskFilterOfTheWrongFormIs400NamingTheField() {
        Map<String, String> auth = Map.of("Authorization", VIEWER);
        RawHttp.Response ok =
                http.send("GET", "/dashboard/tasks?state=pending&id=%201%20&path=$.order.id&value=7", auth, null);
        assertThat(ok.status()).as(ok.body()).isEqualTo(200);
        RawHttp.Response badId = http.send("GET", "/dashboard/tasks?id=0x10", auth, null);
        assertThat(badId.status()).isEqualTo(400);
        assertThat(badId.body()).contains("id must be a task id: digits only");
        RawHttp.Response badState = http.send("GET", "/dashboard/tasks?state=SOON&from=tomorrow", auth, null);
        assertThat(badState.status()).isEqualTo(400);
        assertThat(badState.body())
                .contains("state must be one of")
                .contains("from must be a time like 2026-01-02T03:04 (UTC)");
        RawHttp.Response noValue = http.send("GET", "/dashboard/tasks?path=order.id", auth, null);
        assertThat(noValue.status()).isEqualTo(400);
        assertThat(noValue.body()).contains("payload value is required with a payload path");
    }

    @Test
    void aDefinitionsPageShowsItsLatestRunsNewestFirst() {
        String code = "dash-runs-" + run;
        dbTasks.jobs()
                .create(JobDefinition.builder(code)
                        .name("Dash runs " + run)
                        .business("dash-runs-type-" + run, "DASH-2")
                        .target(JobTarget.of("orderService", "syncOrder", "java.lang.Long", "java.lang.String"))
                        .arguments("[2, \"dash\"]")
                        .queue("dash-runs-idle-" + run) // no worker: the run stays PENDING
                        .build());
        long taskId = dbTasks.jobs().run(code).taskId();

        RawHttp.Response list = http.send("GET", "/dashboard/definitions", Map.of("Authorization", VIEWER), null);
        assertThat(list.body()).contains("href=\"/dashboard/definitions/" + code + "\"");
        RawHttp.Response page =
                http.send("GET", "/dashboard/definitions/" + code, Map.of("Authorization", VIEWER), null);
        assertThat(page.status()).as(page.body()).isEqualTo(200);
        assertThat(page.body())
                .contains("Dash runs " + run)
                .contains("<table id=\"runs\">")
                .contains("data-run=\"1\"")
                .contains("href=\"/dashboard/tasks/" + taskId + "\"")
                .contains("PENDING");
        assertThat(http.send("GET", "/dashboard/definitions/no-such-" + run, Map.of("Authorization", VIEWER), null)
                        .status())
                .isEqualTo(404);
    }

    @Test
    void aTaskHeldBackByItsKeysRateShowsWhyOnItsPage() throws Exception {
        String queue = "dash-rate-" + run;
        dbTasks.limits()
                .set(io.dbtasks.limit.Limit.rate(
                        queue, "k", new io.dbtasks.limit.Rate(1, java.time.Duration.ofHours(1))));
        long taskId = dbTasks.enqueue(io.dbtasks.TaskRequest.builder("dash.rate")
                        .queue(queue) // no worker: the task stays PENDING
                        .concurrencyKey("k")
                        .build())
                .task()
                .id();
        // The key started a task a minute ago: its one start per hour is used.
        try (java.sql.Connection c = dataSource.getConnection();
                java.sql.PreparedStatement ps = c.prepareStatement("INSERT INTO dbtasks_rate_start"
                        + " (queue, concurrency_key, started_at, task_id, expires_at) VALUES (?, 'k', ?, 0, ?)")) {
            java.time.Instant at = java.time.Instant.now().minusSeconds(60);
            ps.setString(1, queue);
            ps.setObject(2, java.time.OffsetDateTime.ofInstant(at, java.time.ZoneOffset.UTC));
            ps.setObject(3, java.time.OffsetDateTime.ofInstant(at.plusSeconds(3600), java.time.ZoneOffset.UTC));
            ps.executeUpdate();
        }
        RawHttp.Response page = http.send("GET", "/dashboard/tasks/" + taskId, Map.of("Authorization", VIEWER), null);
        assertThat(page.status()).as(page.body()).isEqualTo(200);
        assertThat(page.body())
                .contains("id=\"task-concurrency-key\">k<")
                .contains("id=\"task-wait-reason\">waiting for rate limit of key k: 1 start per 1h<");
        dbTasks.limits().remove(queue, "k");
    }

    @Test
    void aChunkWhoseInstanceStoppedShowsAsRescuePending() throws Exception {
        Batch batch = dbTasks.batches()
                .create(BatchRequest.builder("dash.rescue-" + run, 2)
                        .queue("dash-rescue-idle-" + run)
                        .build());
        try (java.sql.Connection c = dataSource.getConnection();
                java.sql.PreparedStatement ps = c.prepareStatement("UPDATE dbtasks_task SET status = 'RUNNING',"
                        + " attempt = 1, lease_owner = 'stopped', lease_token = 1, lease_expires_at = ?"
                        + " WHERE id = (SELECT task_id FROM dbtasks_batch_chunk WHERE batch_id = ? AND chunk = 0)")) {
            ps.setObject(1, java.time.OffsetDateTime.now().minusHours(1));
            ps.setLong(2, batch.id());
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        RawHttp.Response page = http.send("GET", "/dashboard/batches", Map.of("Authorization", VIEWER), null);
        assertThat(page.status()).as(page.body()).isEqualTo(200);
        assertThat(page.body()).contains("1 rescue pending");
        RawHttp.Response api = http.send("GET", "/api/batches/" + batch.id(), Map.of("Authorization", VIEWER), null);
        assertThat(api.body()).contains("\"running\":1").contains("\"rescuePending\":1");
    }

    @Test
    void aWorkflowsPageListsItsStepsByLevelAndATaskLinksToIt() {
        io.dbtasks.workflow.WorkflowRun wf = dbTasks.workflows()
                .insert(io.dbtasks.workflow.Workflow.named("dash-wf-" + run)
                        .step(
                                "first",
                                io.dbtasks.TaskRequest.builder("order.no-param")
                                        .queue("idle-" + run)
                                        .build())
                        .step(
                                "second",
                                io.dbtasks.TaskRequest.builder("order.no-param")
                                        .queue("idle-" + run)
                                        .build(),
                                "first")
                        .build());
        RawHttp.Response page =
                http.send("GET", "/dashboard/workflows/" + wf.id(), Map.of("Authorization", VIEWER), null);
        assertThat(page.status()).as(page.body()).isEqualTo(200);
        assertThat(page.body())
                .contains("dash-wf-" + run)
                .contains("data-step=\"first\"")
                .contains("data-step=\"second\"")
                .contains("WAITING");
        RawHttp.Response task =
                http.send("GET", "/dashboard/tasks/" + wf.taskId("second"), Map.of("Authorization", VIEWER), null);
        assertThat(task.body()).contains("/dashboard/workflows/" + wf.id());
        RawHttp.Response missing =
                http.send("GET", "/dashboard/workflows/999999999", Map.of("Authorization", VIEWER), null);
        assertThat(missing.status()).isEqualTo(404);
    }

    // --- helpers ---------------------------------------------------------------------------------

    record Session(String cookie, String csrf) {}

    private RawHttp.Response post(Session session, String path) {
        return http.send(
                "POST",
                path,
                Map.of("Cookie", session.cookie(), "Content-Type", "application/x-www-form-urlencoded"),
                ("_csrf=" + session.csrf()).getBytes(StandardCharsets.UTF_8));
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
