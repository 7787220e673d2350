package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.NonRetryableException;
import io.dbtasks.TaskStatus;
import io.dbtasks.batch.Batch;
import io.dbtasks.batch.BatchRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Retention of chunked batches: a batch's chunk tasks (with their attempts), chunk rows and batch row
 * leave together, once every chunk task is finished and older than the retention of its state; a
 * day of history holding a chunk task of a batch still kept is not dropped; the counts by queue and
 * state stay exact. Run once per database.
 */
public abstract class BatchRetentionContract extends EngineHarness {
    static final String KIND = "bret.kind";

    private static final Duration KEEP = Duration.ofDays(2);

    /** The batch parameters: chunks listed in {@code failing} fail for good. */
    public record Params(List<Integer> failing) {}

    /** An engine keeping every finished state {@link #KEEP}, with no periodic sweep. */
    private DbTasks engine(boolean workers) {
        return engine(b -> b.workers(workers)
                .queue("default", 2)
                .retentionInterval(Duration.ZERO)
                .retention(TaskStatus.SUCCEEDED, KEEP)
                .retention(TaskStatus.FAILED, KEEP)
                .retention(TaskStatus.CANCELLED, KEEP)
                .chunkHandler(KIND, Params.class, (chunk, tx, p) -> {
                    if (p.failing().contains(chunk.chunk())) {
                        throw new NonRetryableException("chunk " + chunk.chunk() + " refused");
                    }
                }));
    }

    /** Runs a batch of {@code chunks} chunks to its end; chunks in {@code failing} fail. */
    private Batch ranToEnd(int chunks, List<Integer> failing) {
        DbTasks worker = engine(true);
        Batch batch = worker.batches()
                .create(BatchRequest.builder(KIND, chunks)
                        .params(new Params(failing))
                        .maxAttempts(1)
                        .build());
        worker.start();
        eventually()
                .atMost(Duration.ofSeconds(30))
                .alias("every chunk ended")
                .until(() -> worker.batches().progress(batch.id()).finished());
        worker.stop(Duration.ofSeconds(5));
        return batch;
    }

    private List<Long> chunkTasks(long batchId) {
        List<Long> ids = new ArrayList<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT task_id FROM dbtasks_batch_chunk WHERE batch_id = ? ORDER BY chunk")) {
            ps.setLong(1, batchId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return ids;
    }

    private long attemptsOf(List<Long> ids) {
        long n = 0;
        for (long id : ids) {
            n += count("SELECT COUNT(*) FROM dbtasks_attempt WHERE task_id = ?", id);
        }
        return n;
    }

    @Test
    void aBatchWithAChunkStillPendingKeepsItsOldChunksAndRowsThenLeavesWholeOnceAllIsOld() {
        Batch batch = ranToEnd(3, List.of(2));
        List<Long> ids = chunkTasks(batch.id());
        assertThat(ids).hasSize(3);
        assertThat(attemptsOf(ids)).isEqualTo(3);
        DbTasks tasks = engine(false);
        // The failed chunk runs again: pending now, while the other two finished long ago.
        assertThat(tasks.batches().retryFailed(batch.id())).isEqualTo(1);
        assertThat(tasks.find(ids.get(2)).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        int day = finishAt(ids.get(0), TaskStatus.SUCCEEDED, noonDaysAgo(5));
        finishAt(ids.get(1), TaskStatus.SUCCEEDED, noonDaysAgo(5));

        assertThat(tasks.sweepRetention()).isZero();

        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(3);
        assertThat(attemptsOf(ids)).isEqualTo(3);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_batch_chunk WHERE batch_id = ?", batch.id()))
                .isEqualTo(3);
        assertThat(tasks.batches().find(batch.id())).isPresent();
        assertThat(tasks.batches().progress(batch.id()).done()).isEqualTo(2);
        if (dialect().partitionsHistory()) {
            assertThat(partitionExists("dbtasks_task", day))
                    .as("the day of a chunk of a batch still kept")
                    .isTrue();
        }
        assertCountsExact(tasks, List.of("default"));

        // The last chunk ends, long ago too: the whole batch goes in one sweep, and its day with it.
        finishAt(ids.get(2), TaskStatus.FAILED, noonDaysAgo(5));
        assertCountsExact(tasks, List.of("default"));
        assertThat(tasks.sweepRetention()).isEqualTo(3);

        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isZero();
        assertThat(attemptsOf(ids)).isZero();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_batch_chunk")).isZero();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_batch")).isZero();
        assertThat(tasks.batches().find(batch.id())).isEmpty();
        if (dialect().partitionsHistory()) {
            assertThat(partitionExists("dbtasks_task", day)).isFalse();
        }
        assertCountsExact(tasks, List.of("default"));
        assertThat(tasks.sweepRetention()).as("a second sweep finds nothing").isZero();
    }

    @Test
    void aBatchWhoseChunksAreAllOldButOneRecentStaysWhole() {
        Batch batch = ranToEnd(2, List.of());
        List<Long> ids = chunkTasks(batch.id());
        DbTasks tasks = engine(false);
        finishAt(ids.get(0), TaskStatus.SUCCEEDED, noonDaysAgo(5));

        assertThat(tasks.sweepRetention()).isZero();

        assertThat(tasks.find(ids.get(0))).isPresent();
        assertThat(tasks.find(ids.get(1))).isPresent();
        assertThat(tasks.batches().find(batch.id())).isPresent();
        assertCountsExact(tasks, List.of("default"));
    }

    @Test
    void aChunkRowWhoseTaskIsAlreadyGoneCountsAsOld() {
        Batch batch = ranToEnd(2, List.of());
        List<Long> ids = chunkTasks(batch.id());
        DbTasks tasks = engine(false);
        finishAt(ids.get(0), TaskStatus.SUCCEEDED, noonDaysAgo(5));
        finishAt(ids.get(1), TaskStatus.SUCCEEDED, noonDaysAgo(5));
        // As an earlier version left it: one chunk task deleted alone, its chunk row kept.
        sql("DELETE FROM dbtasks_attempt WHERE task_id = ?", ids.get(1));
        sql("DELETE FROM dbtasks_task WHERE id = ?", ids.get(1));

        assertThat(tasks.sweepRetention()).isEqualTo(1);

        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isZero();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_batch_chunk")).isZero();
        assertThat(tasks.batches().find(batch.id())).isEmpty();
    }
}
