package io.dbtasks.spring.rescue;

import io.dbtasks.spring.RunOnce;
import io.dbtasks.spring.autoconfigure.DbTasksAutoConfiguration;
import io.dbtasks.spring.autoconfigure.RunOnceInterceptor;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * An application with one every-second {@code @Scheduled} + {@code @RunOnce} method, run by the
 * instances of {@link SlotRescueContract}: two contexts in the test's JVM and one in a second
 * process that hangs in the first slot it wins, so that the test can kill it mid-run.
 */
@SpringBootConfiguration
@ImportAutoConfiguration({DataSourceAutoConfiguration.class, DbTasksAutoConfiguration.class})
@EnableScheduling
public class SlotApp {
    /** Completed runs by run-once key, across the contexts of this JVM. */
    static final Map<String, AtomicInteger> COMPLETED = new ConcurrentHashMap<>();

    /** Set in the second process: a run prints its key and hangs instead of completing. */
    static volatile boolean hang;

    /** The ticker. */
    public static class Ticker {
        @Scheduled(cron = "* * * * * *")
        @RunOnce(key = "slot-tick", lease = "3s")
        public void tick() throws InterruptedException {
            String key = RunOnceInterceptor.currentKey().orElseThrow();
            if (hang) {
                System.out.println("RUNNING " + key);
                System.out.flush();
                Thread.sleep(600_000);
            }
            COMPLETED.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        }
    }

    @Bean
    Ticker ticker() {
        return new Ticker();
    }

    static ConfigurableApplicationContext start(String url, String workerId) {
        return new SpringApplicationBuilder(SlotApp.class)
                .properties(
                        "spring.datasource.url=" + url,
                        "spring.main.banner-mode=off",
                        "spring.main.web-application-type=none",
                        "dbtasks.worker-id=" + workerId,
                        "dbtasks.queues.default=2",
                        "dbtasks.poll-interval=200ms",
                        "dbtasks.rescue-interval=300ms",
                        "dbtasks.lease=3s",
                        "dbtasks.shutdown-timeout=2s")
                .run();
    }

    /** The second process: one instance that hangs in the first slot it wins. */
    public static void main(String[] args) {
        hang = true;
        start(args[0], args[1]);
    }
}
