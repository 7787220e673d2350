package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.DbTasksException;
import io.dbtasks.TaskRequest;
import io.dbtasks.testing.TestDatabase;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL only (its combined enqueue is one statement over arrays): lone enqueues stored
 * together in one statement do not fail together when one caller's task is one the database
 * refuses (a due time past PostgreSQL's timestamp range).
 */
class PostgresEnqueueCombiningTest extends EngineHarness {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Test
    void aBadTaskFailsOnlyItsOwnCallerWhenStoredWithOthers() throws Exception {
        DbTasks tasks = producer();
        int threads = 16;
        int each = 50;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<int[]>> futures = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    int stored = 0;
                    int refused = 0;
                    for (int i = 0; i < each; i++) {
                        boolean bad = thread == 0 && i % 5 == 0;
                        String name = bad ? "bad-name-" + i : "good-" + thread + "-" + i;
                        try {
                            // A due time PostgreSQL cannot store: refused by the database alone.
                            tasks.enqueue(TaskRequest.builder("combining.kind")
                                    .name(name)
                                    .runAt(bad ? Instant.parse("+300000-01-01T00:00:00Z") : null)
                                    .build());
                            assertThat(bad).as("%s was stored", name).isFalse();
                            stored++;
                        } catch (DbTasksException e) {
                            assertThat(bad)
                                    .as("%s failed: %s", name, e.getMessage())
                                    .isTrue();
                            assertThat(e).isInstanceOf(io.dbtasks.DataRejectedException.class);
                            refused++;
                        }
                    }
                    return new int[] {stored, refused};
                }));
            }
            int stored = 0;
            int refused = 0;
            for (Future<int[]> f : futures) {
                int[] r = f.get(60, TimeUnit.SECONDS);
                stored += r[0];
                refused += r[1];
            }
            assertThat(refused).isEqualTo(each / 5);
            assertThat(stored).isEqualTo(threads * each - each / 5);
            assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE name LIKE 'good-%'"))
                    .isEqualTo(stored);
        } finally {
            pool.shutdownNow();
        }
    }
}
