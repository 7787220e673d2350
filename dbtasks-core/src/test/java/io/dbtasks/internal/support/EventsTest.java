package io.dbtasks.internal.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.event.TaskEvent;
import io.dbtasks.event.TaskEventListener;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Delivery off the publisher's thread: bounded, counted drops, listeners isolated from each other. */
class EventsTest {
    private static TaskEvent event(long id) {
        return new TaskEvent(TaskEvent.Type.CLAIMED, id, "k", "q", 1, id, "w", Instant.now(), null, null);
    }

    @Test
    void blockedListenerDropsOnlyItsOwnOverflowAndNeverBlocksThePublisher() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger blockedGot = new AtomicInteger();
        AtomicInteger otherGot = new AtomicInteger();
        TaskEventListener blocked = e -> {
            blockedGot.incrementAndGet();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        };
        TaskEventListener other = e -> otherGot.incrementAndGet();
        Events events = new Events("w", List.of(blocked, other));
        events.start();
        int n = Events.QUEUE_CAPACITY + 5_000;

        for (int i = 0; i < n; i++) {
            events.publish(event(i));
            if (i == 0) {
                while (blockedGot.get() == 0) {
                    Thread.onSpinWait(); // the blocked listener holds the first event
                }
            }
            if (i % 1000 == 999) {
                // Let the free listener keep up, so that only the blocked one can overflow: its
                // queue never holds more than 1,000 of the capacity.
                while (otherGot.get() < i + 1 - 1000) {
                    Thread.onSpinWait();
                }
            }
        }
        release.countDown();
        events.close(Duration.ofSeconds(10));

        assertThat(otherGot).hasValue(n);
        assertThat(blockedGot).hasValue(Events.QUEUE_CAPACITY + 1);
        assertThat(events.dropped()).isEqualTo(n - Events.QUEUE_CAPACITY - 1);
    }

    @Test
    void throwingListenerKeepsReceiving() {
        AtomicInteger calls = new AtomicInteger();
        Events events = new Events("w", List.of(e -> {
            calls.incrementAndGet();
            throw new IllegalStateException("boom");
        }));
        events.start();
        for (int i = 0; i < 100; i++) {
            events.publish(event(i));
        }
        events.close(Duration.ofSeconds(10));
        assertThat(calls).hasValue(100);
        assertThat(events.dropped()).isZero();
    }
}
