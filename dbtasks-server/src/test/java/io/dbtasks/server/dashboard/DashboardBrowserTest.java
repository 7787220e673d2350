package io.dbtasks.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.Page;
import io.dbtasks.Task;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.server.demo.DemoHandlers;
import io.dbtasks.server.demo.FlakyPayload;
import io.dbtasks.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * The dashboard in headless Chromium against the real server on in-memory H2: each page renders,
 * the filters find tasks, a failed task's attempt shows with its stack trace and can be retried, a
 * bulk cancel covers every matching task (not one page), a queue pauses and resumes. Screenshots of
 * each page are written (see {@link Browser#screenshotDir()}). Every test logs in through the form at
 * {@code /login}; a viewer sees the actions disabled and the server refuses them.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.poll-interval=50ms",
            "dbtasks.shutdown-timeout=2s",
            "dbtasks.dashboard.counts-interval=500ms",
            "dbtasks.server.seed-demo-jobs=true"
        })
@TestPropertySource(locations = "classpath:test-users.properties")
@ExtendWith(Browser.Required.class)
class DashboardBrowserTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @LocalServerPort
    int port;

    @Autowired
    DbTasks dbTasks;

    private WebDriver driver;
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void requirements() {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:dbtasks_dashboard_browser;DB_CLOSE_DELAY=-1");
    }

    @BeforeEach
    void openBrowser() {
        driver = Browser.start(1366, 900);
    }

    @AfterEach
    void closeBrowser() {
        if (driver != null) {
            driver.quit();
        }
    }

    private String url(String path) {
        return "http://localhost:" + port + path;
    }

    private void logIn(String user, String password) {
        driver.get(url("/login"));
        driver.findElement(By.id("username")).sendKeys(user);
        driver.findElement(By.id("password")).sendKeys(password);
        driver.findElement(By.cssSelector("form button[type=submit]")).click();
        waiting().until(d -> !d.getCurrentUrl().contains("/login"));
    }

    private WebDriverWait waiting() {
        // Live regions are swapped by htmx every few seconds: an element found just before a swap is
        // stale when read, so a wait looks again.
        WebDriverWait wait = new WebDriverWait(driver, WAIT, Duration.ofMillis(100));
        wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class);
        return wait;
    }

    private long failedFlakyTask() {
        long id = dbTasks.enqueue(TaskRequest.builder(DemoHandlers.FLAKY)
                        .payload(new FlakyPayload(1))
                        .reference("browser-" + run)
                        .maxAttempts(1)
                        .build())
                .task()
                .id();
        await().atMost(WAIT).until(() -> dbTasks.find(id).orElseThrow().status() == TaskStatus.FAILED);
        return id;
    }

    @Test
    void filterTasksOpenAFailedAttemptAndRetryIt() {
        long id = failedFlakyTask();
        driver.get(url("/dashboard/tasks"));
        assertThat(driver.getCurrentUrl()).endsWith("/login"); // nothing without logging in
        Browser.screenshot(driver, "login");
        logIn("operator", "operator-secret");

        driver.get(url("/dashboard/tasks"));
        new Select(driver.findElement(By.id("f-state"))).selectByValue("FAILED");
        driver.findElement(By.id("f-reference")).sendKeys("browser-" + run);
        driver.findElement(By.id("apply-filter")).click();
        waiting().until(d -> d.getCurrentUrl().contains("state=FAILED"));
        List<WebElement> links = driver.findElements(By.cssSelector("#task-table a.task-link"));
        assertThat(links).extracting(WebElement::getText).containsExactly(String.valueOf(id));
        Browser.screenshot(driver, "tasks-filtered");

        links.get(0).click();
        waiting().until(d -> d.findElements(By.id("attempts")).size() == 1);
        assertThat(driver.findElement(By.id("task-state")).getText()).isEqualTo("FAILED");
        WebElement failedAttempt = driver.findElement(By.cssSelector("#attempts tr[data-outcome='FAILED']"));
        assertThat(failedAttempt.getText()).contains("IllegalStateException").contains("fails attempt 1");
        assertThat(driver.findElement(By.cssSelector("#attempts pre.stack")).getAttribute("textContent"))
                .contains("at io.dbtasks");
        assertThat(driver.findElement(By.id("payload")).getText()).contains("\"failTimes\" : 1");
        assertThat(driver.findElement(By.id("timeline")).getText())
                .contains("enqueued")
                .contains("attempt 1 FAILED");
        Browser.screenshot(driver, "task-detail-failed");

        driver.findElement(By.id("action-retry")).click();
        waiting().until(d -> d.findElement(By.cssSelector(".flash")).getText().contains("sent back to PENDING"));
        await().atMost(WAIT).until(() -> dbTasks.find(id).orElseThrow().status() == TaskStatus.SUCCEEDED);
        driver.navigate().refresh();
        waiting().until(d -> d.findElement(By.id("task-state")).getText().equals("SUCCEEDED"));
        assertThat(driver.findElements(By.cssSelector("#attempts tr[data-outcome]")))
                .extracting(e -> e.getAttribute("data-outcome"))
                .containsExactly("FAILED", "SUCCEEDED");
        Browser.screenshot(driver, "task-detail-retried");
    }

    @Test
    void bulkCancelCoversEveryMatchingTaskNotOnlyThePage() {
        String queue = "bulk-" + run; // no instance works it, so its tasks stay PENDING until cancelled
        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            requests.add(TaskRequest.builder(DemoHandlers.FLAKY)
                    .payload(new FlakyPayload(0))
                    .queue(queue)
                    .build());
        }
        dbTasks.enqueueAll(requests);
        logIn("operator", "operator-secret");
        // One more elsewhere that must not be touched.
        long bystander = dbTasks.enqueue(TaskRequest.builder(DemoHandlers.FLAKY)
                        .payload(new FlakyPayload(0))
                        .queue("other-" + run)
                        .build())
                .task()
                .id();

        driver.get(url("/dashboard/tasks?queue=" + queue));
        assertThat(driver.findElements(By.cssSelector("#task-table a.task-link")))
                .hasSize(50);
        assertThat(driver.findElements(By.id("older"))).hasSize(1);
        Browser.screenshot(driver, "tasks");
        new Select(driver.findElement(By.id("bulk-action"))).selectByValue("cancel");
        driver.findElement(By.id("bulk-preview")).click();
        waiting().until(d -> d.findElements(By.id("bulk-matching")).size() == 1);
        assertThat(driver.findElement(By.id("bulk-matching")).getText()).startsWith("100 tasks match");
        Browser.screenshot(driver, "bulk-confirm");
        driver.findElement(By.id("bulk-confirm")).click();
        waiting().until(d -> "true".equals(d.findElement(By.id("bulk-status")).getAttribute("data-finished")));
        driver.navigate().refresh();
        assertThat(driver.findElement(By.id("bulk-done")).getText()).isEqualTo("100");
        assertThat(driver.findElement(By.id("bulk-skipped")).getText()).isEqualTo("0");
        Browser.screenshot(driver, "bulk-finished");

        Page<Task> cancelled = dbTasks.list(new TaskFilter(TaskStatus.CANCELLED, queue, null), 0, 1000);
        assertThat(cancelled.total()).isEqualTo(100);
        assertThat(dbTasks.list(new TaskFilter(null, queue, null), 0, 1000).total())
                .isEqualTo(100);
        assertThat(dbTasks.find(bystander).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
    }

    @Test
    void pauseAndResumeAQueue() throws Exception {
        logIn("operator", "operator-secret");
        driver.get(url("/dashboard/queues"));
        driver.findElement(By.id("pause-default")).click();
        waiting()
                .until(d -> d.findElement(By.cssSelector("tr[data-queue='default'] .queue-state"))
                        .getText()
                        .equals("paused"));
        assertThat(dbTasks.pausedQueues()).contains("default");
        long id = dbTasks.enqueue(TaskRequest.builder(DemoHandlers.FLAKY)
                        .payload(new FlakyPayload(0))
                        .build())
                .task()
                .id();
        Thread.sleep(1500); // many poll intervals: a paused queue is not claimed
        assertThat(dbTasks.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        Browser.screenshot(driver, "queues-paused");

        driver.findElement(By.id("resume-default")).click();
        waiting()
                .until(d -> d.findElement(By.cssSelector("tr[data-queue='default'] .queue-state"))
                        .getText()
                        .equals("running"));
        await().atMost(WAIT).until(() -> dbTasks.find(id).orElseThrow().status() == TaskStatus.SUCCEEDED);
        assertThat(dbTasks.pausedQueues()).doesNotContain("default");
        Browser.screenshot(driver, "queues");
    }

    @Test
    void theWorkflowPageDrawsTheGraphAndAStepLeadsToItsAttempts() {
        String queue = "idle-wf-" + run; // no engine works it: the steps keep their states
        io.dbtasks.workflow.WorkflowRun wf = dbTasks.workflows()
                .insert(io.dbtasks.workflow.Workflow.named("diamond-" + run)
                        .step(
                                "extract",
                                TaskRequest.builder(DemoHandlers.FLAKY)
                                        .queue(queue)
                                        .build())
                        .step(
                                "clean",
                                TaskRequest.builder(DemoHandlers.FLAKY)
                                        .queue(queue)
                                        .build(),
                                "extract")
                        .step(
                                "enrich",
                                TaskRequest.builder(DemoHandlers.FLAKY)
                                        .queue(queue)
                                        .build(),
                                "extract")
                        .step(
                                "load",
                                TaskRequest.builder(DemoHandlers.FLAKY)
                                        .queue(queue)
                                        .build(),
                                "clean",
                                "enrich")
                        .build());
        logIn("viewer", "viewer-secret");
        driver.get(url("/dashboard/workflows/" + wf.id()));
        var graph = driver.findElement(By.id("workflow-graph"));
        assertThat(graph.isDisplayed()).isTrue();
        assertThat(graph.findElements(By.cssSelector("a.node"))).hasSize(4);
        assertThat(graph.findElements(By.cssSelector("path.edge"))).hasSize(4);
        // Layers left to right: extract, then clean and enrich one above the other, then load.
        int extract = nodeX("extract");
        int clean = nodeX("clean");
        int enrich = nodeX("enrich");
        int load = nodeX("load");
        assertThat(clean).isGreaterThan(extract).isEqualTo(enrich);
        assertThat(load).isGreaterThan(clean);
        assertThat(driver.findElement(By.cssSelector("a.node[data-step='extract']"))
                        .getAttribute("data-state"))
                .isEqualTo("PENDING");
        assertThat(driver.findElement(By.cssSelector("a.node[data-step='load']"))
                        .getAttribute("data-state"))
                .isEqualTo("WAITING");
        Browser.screenshot(driver, "workflow");
        driver.findElement(By.cssSelector("a.node[data-step='load'] rect")).click();
        waiting().until(d -> d.getCurrentUrl().endsWith("/dashboard/tasks/" + wf.taskId("load")));
        assertThat(driver.findElement(By.tagName("body")).getText()).contains("WAITING");
    }

    private int nodeX(String step) {
        return driver.findElement(By.cssSelector("a.node[data-step='" + step + "'] rect"))
                .getRect()
                .getX();
    }

    @Test
    void everyPageRendersAndTheOverviewRefreshesLive() throws Exception {
        failedFlakyTask();
        dbTasks.locks().tryAcquire("report.nightly-" + run, Duration.ofMinutes(5));
        dbTasks.guards().runOnce("invoice-2026-11-" + run, Duration.ofMinutes(1), lease -> {});
        dbTasks.inbox().receive("payments", "msg-" + run, tx -> {});
        logIn("admin", "admin-secret");

        driver.get(url("/"));
        waiting().until(d -> !d.findElement(By.id("count-SUCCEEDED")).getText().isEmpty());
        waiting().until(d -> d.findElements(By.cssSelector("#chart .uplot")).size() == 1);
        long failedBefore = Long.parseLong(
                driver.findElement(By.id("count-FAILED")).getText().replace(",", ""));
        Browser.screenshot(driver, "overview");
        // Live refresh: a new failure shows without reloading the page.
        failedFlakyTask();
        waiting()
                .until(d -> Long.parseLong(
                                d.findElement(By.id("count-FAILED")).getText().replace(",", ""))
                        > failedBefore);

        driver.get(url("/dashboard/instances"));
        assertThat(driver.findElement(By.id("instances")).getText())
                .contains(dbTasks.workerId())
                .contains("alive");
        Browser.screenshot(driver, "instances");
        driver.get(url("/dashboard/locks"));
        assertThat(driver.findElement(By.tagName("table")).getText()).contains("report.nightly-" + run);
        Browser.screenshot(driver, "locks");
        driver.get(url("/dashboard/guards"));
        assertThat(driver.findElement(By.tagName("table")).getText()).contains("invoice-2026-11-" + run);
        Browser.screenshot(driver, "guards");
        driver.get(url("/dashboard/inbox"));
        assertThat(driver.findElement(By.tagName("table")).getText()).contains("msg-" + run);
        Browser.screenshot(driver, "inbox");
        driver.get(url("/dashboard/schedules"));
        assertThat(driver.findElement(By.id("schedules")).isDisplayed()).isTrue();
        Browser.screenshot(driver, "schedules");

        // Payload search through the browser.
        driver.get(url("/dashboard/tasks?path=failTimes&value=1&state=FAILED"));
        assertThat(driver.findElements(By.cssSelector("#task-table a.task-link")))
                .isNotEmpty();

        // Phone width: the navigation collapses and the page still renders.
        driver.quit();
        driver = Browser.start(390, 844);
        logIn("admin", "admin-secret");
        driver.get(url("/"));
        waiting()
                .until(d -> d.findElements(By.cssSelector(".nav-burger")).size() == 1
                        && d.findElement(By.cssSelector(".nav-burger")).isDisplayed());
        Browser.screenshot(driver, "overview-phone");
        driver.get(url("/dashboard/tasks"));
        Browser.screenshot(driver, "tasks-phone");
    }

    @Test
    void aViewerSeesActionsDisabledAndTheServerRefusesThem() {
        long id = failedFlakyTask();
        logIn("viewer", "viewer-secret");
        assertThat(driver.findElement(By.id("current-user")).getText()).isEqualTo("viewer (viewer)");

        driver.get(url("/dashboard/tasks/" + id));
        assertThat(driver.findElement(By.id("action-retry")).isEnabled()).isFalse();
        assertThat(driver.findElement(By.id("action-delete")).isEnabled()).isFalse();
        Browser.screenshot(driver, "viewer-task-detail");
        driver.get(url("/dashboard/tasks"));
        assertThat(driver.findElements(By.id("bulk-form"))).isEmpty();
        assertThat(driver.findElement(By.id("read-only-note")).getText()).contains("operator role");
        driver.get(url("/dashboard/queues"));
        assertThat(driver.findElement(By.id("pause-default")).isEnabled()).isFalse();

        // The buttons are only a courtesy: the same POSTs from the viewer's session, with a valid
        // CSRF token, are refused by the server, and nothing changes.
        driver.get(url("/dashboard/tasks/" + id));
        for (String path : List.of(
                "/dashboard/tasks/" + id + "/retry",
                "/dashboard/tasks/" + id + "/delete",
                "/dashboard/queues/pause?queue=default",
                "/dashboard/bulk?action=cancel&queue=default")) {
            Object status = ((org.openqa.selenium.JavascriptExecutor) driver)
                    .executeAsyncScript(
                            "var done = arguments[arguments.length - 1];"
                                    + "var h = document.querySelector('meta[name=csrf-header]').content;"
                                    + "var t = document.querySelector('meta[name=csrf-token]').content;"
                                    + "var headers = {}; headers[h] = t;"
                                    + "fetch(arguments[0], {method: 'POST', headers: headers, redirect: 'manual'})"
                                    + ".then(function (r) { done(r.status); });",
                            url(path));
            assertThat(((Number) status).intValue()).as(path).isEqualTo(403);
        }
        assertThat(dbTasks.find(id).orElseThrow().status()).isEqualTo(TaskStatus.FAILED);
        assertThat(dbTasks.pausedQueues()).doesNotContain("default");
    }

    @Test
    void anOperatorMayActButNotDeleteAndAPostWithoutCsrfTokenIsRefused() {
        long id = failedFlakyTask();
        logIn("operator", "operator-secret");
        driver.get(url("/dashboard/tasks/" + id));
        assertThat(driver.findElement(By.id("action-retry")).isEnabled()).isTrue();
        assertThat(driver.findElement(By.id("action-delete")).isEnabled()).isFalse();
        Object withoutToken = ((org.openqa.selenium.JavascriptExecutor) driver)
                .executeAsyncScript(
                        "var done = arguments[arguments.length - 1];"
                                + "fetch(arguments[0], {method: 'POST', redirect: 'manual'}).then(function (r) { done(r.status); });",
                        url("/dashboard/tasks/" + id + "/retry"));
        assertThat(((Number) withoutToken).intValue()).isEqualTo(403);
        Object delete = ((org.openqa.selenium.JavascriptExecutor) driver)
                .executeAsyncScript(
                        "var done = arguments[arguments.length - 1];"
                                + "var h = document.querySelector('meta[name=csrf-header]').content;"
                                + "var t = document.querySelector('meta[name=csrf-token]').content;"
                                + "var headers = {}; headers[h] = t;"
                                + "fetch(arguments[0], {method: 'POST', headers: headers, redirect: 'manual'})"
                                + ".then(function (r) { done(r.status); });",
                        url("/dashboard/bulk?action=delete&id=" + id));
        assertThat(((Number) delete).intValue()).isEqualTo(403);
        assertThat(dbTasks.find(id)).isPresent();
    }
}
