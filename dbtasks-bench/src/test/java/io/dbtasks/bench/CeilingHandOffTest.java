package io.dbtasks.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The ceiling's hand-off from claimers to completion writers: a claimer waits for room as long as
 * the writers live, and gives up once one has failed, where a plain {@code put} would block forever
 * on a queue no one drains any more (the timeouts only turn such a hang into a failure).
 */
class CeilingHandOffTest {
    private static final Duration HANG = Duration.ofSeconds(20);

    @Test
    void handsOffWhileThereIsRoom() throws Exception {
        BlockingQueue<String> queue = new ArrayBlockingQueue<>(1);
        assertTrue(Ceiling.handOff(queue, "batch", new AtomicReference<>()));
        assertEquals("batch", queue.poll());
    }

    @Test
    void waitsForAWriterToMakeRoom() throws Exception {
        BlockingQueue<String> queue = new ArrayBlockingQueue<>(1);
        queue.add("first");
        CompletableFuture<String> writer = CompletableFuture.supplyAsync(() -> {
            try {
                TimeUnit.MILLISECONDS.sleep(200);
                return queue.take();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertTimeoutPreemptively(HANG, () -> assertTrue(Ceiling.handOff(queue, "second", new AtomicReference<>())));
        assertEquals("first", writer.get());
        assertEquals("second", queue.poll());
    }

    @Test
    void givesUpOnceAWriterFailedInsteadOfBlockingOnAFullQueue() throws Exception {
        BlockingQueue<String> queue = new ArrayBlockingQueue<>(1);
        queue.add("never taken");
        AtomicReference<Throwable> writerFailed = new AtomicReference<>();
        CompletableFuture.runAsync(() -> {
            try {
                TimeUnit.MILLISECONDS.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            writerFailed.set(new IllegalStateException("the writer's connection broke"));
        });
        assertTimeoutPreemptively(HANG, () -> assertFalse(Ceiling.handOff(queue, "batch", writerFailed)));
        assertEquals(1, queue.size());
    }
}
