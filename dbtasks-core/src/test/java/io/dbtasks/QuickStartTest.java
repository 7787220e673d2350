package io.dbtasks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The plain-Java example of the README and docs/getting-started.md, as it is printed there: if this
 * test stops compiling or passing, the documentation is wrong.
 */
class QuickStartTest {
    record SendMail(String to, String subject) {}

    private final List<String> sent = new CopyOnWriteArrayList<>();

    private void send(String to, String subject) {
        sent.add(to + ": " + subject);
    }

    @Test
    void theReadmeExampleRunsATaskOnceForTwoEnqueuesWithOneKey() {
        HikariDataSource dataSource = new HikariDataSource(); // the pool the README recommends
        dataSource.setJdbcUrl("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");

        // --- example start ---
        DbTasks tasks = DbTasks.builder(dataSource)
                .queue("default", 4) // up to 4 tasks at once on this instance
                .handler("mail.send", SendMail.class, (ctx, mail) -> send(mail.to(), mail.subject()))
                .build(); // creates or migrates the dbtasks_* tables
        tasks.start();

        TaskRequest welcome = TaskRequest.builder("mail.send")
                .payload(new SendMail("ann@example.com", "Welcome"))
                .idempotencyKey("welcome-ann") // the same key again stores no second task
                .maxAttempts(5)
                .build();
        EnqueueResult first = tasks.enqueue(welcome);
        EnqueueResult again = tasks.enqueue(welcome); // again.duplicate() == true
        // --- example end ---

        assertThat(again.duplicate()).isTrue();
        assertThat(again.task().id()).isEqualTo(first.task().id());
        await().atMost(Duration.ofSeconds(20))
                .until(() -> tasks.find(first.task().id()).orElseThrow().status() == TaskStatus.SUCCEEDED);
        tasks.close(); // waits for running tasks, hands back the rest
        assertThat(sent).containsExactly("ann@example.com: Welcome");
        dataSource.close();
    }
}
