package io.dbtasks.server.api;

import io.dbtasks.DbTasks;
import io.dbtasks.limit.KeyLoad;
import io.dbtasks.limit.Limit;
import io.dbtasks.limit.Rate;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.time.Duration;
import java.util.List;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Concurrency and rate limits per concurrency key ({@code /api/limits}) and queue-wide rates ({@code
 * /api/limits/queue-rates}), read and changed through {@link
 * DbTasks#limits()}: a change holds on every engine within {@link io.dbtasks.limit.Limits#REFRESH_MILLIS}
 * ms. Reading needs the viewer role, setting the operator role and removing the admin role, as for
 * every other resource.
 */
@RestController
@RequestMapping("/api")
@Tag(name = "Limits")
public class LimitController {
    private final DbTasks dbTasks;

    /** @param dbTasks the engine, whose database holds the limits */
    public LimitController(DbTasks dbTasks) {
        this.dbTasks = dbTasks;
    }

    /**
     * A limit to set.
     *
     * @param queue the queue; required
     * @param keyPattern an exact key, a pattern with {@code *}, or {@code *} for every key; required
     * @param maxRunning at most this many tasks of one key RUNNING at once, at least 1; {@code null}
     *     for no such bound (then {@code fifo} or a rate is required)
     * @param fifo true to run each key's tasks one at a time in enqueue order; {@code null} for false
     * @param rateStarts at most this many starts of one key in any window of {@code ratePeriodMillis},
     *     at least 1; {@code null} for no rate (then {@code ratePeriodMillis} must be {@code null} too)
     * @param ratePeriodMillis the rate's window in milliseconds, at least 1
     */
    public record LimitRequest(
            String queue,
            String keyPattern,
            Integer maxRunning,
            Boolean fifo,
            Integer rateStarts,
            Long ratePeriodMillis) {}

    /**
     * A limit as stored.
     *
     * @param queue the queue
     * @param keyPattern the keys it applies to
     * @param maxRunning at most this many tasks of one key RUNNING at once, or {@code null} for no bound
     * @param fifo whether each key's tasks run one at a time in enqueue order
     * @param rateStarts at most this many starts of one key in any window of {@code ratePeriodMillis},
     *     or {@code null} for no rate
     * @param ratePeriodMillis the rate's window in milliseconds, or {@code null}
     * @param rate the rate as people read it ({@code 10 starts per 1s}), or {@code null}
     */
    public record LimitView(
            String queue,
            String keyPattern,
            Integer maxRunning,
            boolean fifo,
            Integer rateStarts,
            Long ratePeriodMillis,
            String rate) {
        static LimitView of(Limit l) {
            Rate r = l.rate();
            return new LimitView(
                    l.queue(),
                    l.keyPattern(),
                    l.limitsRunning() ? l.maxRunning() : null,
                    l.fifo(),
                    r == null ? null : r.starts(),
                    r == null ? null : r.periodMillis(),
                    r == null ? null : r.toString());
        }
    }

    /**
     * @return every limit, by queue and key pattern
     */
    @Operation(summary = "List the concurrency and rate limits")
    @GetMapping("/limits")
    public List<LimitView> list() {
        return dbTasks.limits().list().stream().map(LimitView::of).toList();
    }

    /**
     * @param body the limit
     * @return the limit as stored
     * @throws BadRequestException (400) for a missing queue or pattern, or a limit out of range
     */
    @Operation(
            summary = "Set a concurrency or rate limit",
            description = "Replaces the limit of the same queue and key pattern; in force on every engine within"
                    + " 500 ms. A rate (rateStarts per ratePeriodMillis) holds in any window of that length.")
    @PutMapping(path = "/limits", consumes = "application/json")
    public LimitView set(@RequestBody LimitRequest body) {
        if (body == null || body.queue() == null || body.keyPattern() == null) {
            throw new BadRequestException("'queue' and 'keyPattern' are required ('*' for every key of the queue)");
        }
        TextChecks.check("queue", body.queue());
        TextChecks.check("keyPattern", body.keyPattern());
        boolean fifo = Boolean.TRUE.equals(body.fifo());
        boolean rated = body.rateStarts() != null || body.ratePeriodMillis() != null;
        if (!fifo && body.maxRunning() == null && !rated) {
            throw new BadRequestException("give 'maxRunning' (at least 1), 'fifo': true, or a rate"
                    + " ('rateStarts' per 'ratePeriodMillis')");
        }
        if (rated && (body.rateStarts() == null || body.ratePeriodMillis() == null)) {
            throw new BadRequestException(
                    "a rate needs both 'rateStarts' (at least 1) and 'ratePeriodMillis'" + " (at least 1)");
        }
        Limit limit;
        try {
            Rate rate = rated ? new Rate(body.rateStarts(), Duration.ofMillis(body.ratePeriodMillis())) : null;
            int maxRunning = body.maxRunning() != null ? body.maxRunning() : fifo ? 1 : Limit.NO_MAX_RUNNING;
            limit = new Limit(body.queue(), body.keyPattern(), maxRunning, fifo, rate);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
        dbTasks.limits().set(limit);
        return LimitView.of(limit);
    }

    /**
     * @param queue the queue
     * @param keyPattern the key pattern exactly as set
     * @return 204 if it was removed, 404 if there was none
     */
    @Operation(summary = "Remove a concurrency or rate limit")
    @DeleteMapping("/limits")
    public ResponseEntity<Void> remove(@RequestParam String queue, @RequestParam String keyPattern) {
        TextChecks.check("queue", queue);
        TextChecks.check("keyPattern", keyPattern);
        return dbTasks.limits().remove(queue, keyPattern)
                ? ResponseEntity.noContent().build()
                : ResponseEntity.notFound().build();
    }

    /**
     * A queue-wide rate to set.
     *
     * @param queue the queue; required
     * @param rateStarts at most this many starts of the whole queue, whatever the tasks' keys, in any
     *     window of {@code ratePeriodMillis}, at least 1; required
     * @param ratePeriodMillis the window in milliseconds, at least 1; required
     */
    public record QueueRateRequest(String queue, Integer rateStarts, Long ratePeriodMillis) {}

    /**
     * A queue-wide rate as stored.
     *
     * @param queue the queue
     * @param rateStarts at most this many starts of the queue in any window of {@code ratePeriodMillis}
     * @param ratePeriodMillis the window in milliseconds
     * @param rate the rate as people read it ({@code 10 starts per 1s})
     */
    public record QueueRateView(String queue, int rateStarts, long ratePeriodMillis, String rate) {
        static QueueRateView of(String queue, Rate r) {
            return new QueueRateView(queue, r.starts(), r.periodMillis(), r.toString());
        }
    }

    /**
     * @return every queue-wide rate, by queue
     */
    @Operation(summary = "List the queue-wide rates")
    @GetMapping("/limits/queue-rates")
    public List<QueueRateView> queueRates() {
        return dbTasks.limits().queueRates().entrySet().stream()
                .map(e -> QueueRateView.of(e.getKey(), e.getValue()))
                .toList();
    }

    /**
     * @param body the queue and its rate
     * @return the rate as stored
     * @throws BadRequestException (400) for a missing or invalid queue, or a rate missing or out of range
     */
    @Operation(
            summary = "Set a queue-wide rate",
            description = "At most rateStarts starts of the whole queue, whatever the tasks' concurrency keys, in"
                    + " any window of ratePeriodMillis; replaces the queue's rate, holds together with its"
                    + " limits per key, and is in force on every engine within 500 ms.")
    @PutMapping(path = "/limits/queue-rates", consumes = "application/json")
    public QueueRateView setQueueRate(@RequestBody QueueRateRequest body) {
        if (body == null || body.queue() == null) {
            throw new BadRequestException("'queue' is required");
        }
        TextChecks.check("queue", body.queue());
        if (body.rateStarts() == null || body.ratePeriodMillis() == null) {
            throw new BadRequestException(
                    "a queue-wide rate needs both 'rateStarts' (at least 1) and 'ratePeriodMillis' (at least 1)");
        }
        Rate rate;
        try {
            rate = new Rate(body.rateStarts(), Duration.ofMillis(body.ratePeriodMillis()));
            dbTasks.limits().setQueueRate(body.queue(), rate);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
        return QueueRateView.of(body.queue(), rate);
    }

    /**
     * @param queue the queue
     * @return 204 if its queue-wide rate was removed, 404 if it had none
     */
    @Operation(summary = "Remove a queue-wide rate")
    @DeleteMapping("/limits/queue-rates")
    public ResponseEntity<Void> removeQueueRate(@RequestParam String queue) {
        TextChecks.check("queue", queue);
        return dbTasks.limits().removeQueueRate(queue)
                ? ResponseEntity.noContent().build()
                : ResponseEntity.notFound().build();
    }

    /**
     * Whether a queue's claims are fair across concurrency keys.
     *
     * @param queue the queue; required
     * @param fair true for claims round robin over keys, false for priority and run time order alone;
     *     required
     */
    public record FairnessRequest(String queue, Boolean fair) {}

    /**
     * @return the queues set fair, by name (queues with a limit are fair as well)
     */
    @Operation(summary = "List the queues whose claims are fair across concurrency keys")
    @GetMapping("/limits/fair")
    public List<String> fairQueues() {
        return dbTasks.limits().fairQueues();
    }

    /**
     * @param body the queue and whether it is fair
     * @return the setting as stored
     * @throws BadRequestException (400) for a missing or invalid queue, or a missing {@code fair}
     */
    @Operation(
            summary = "Make a queue's claims fair across concurrency keys, or plain again",
            description = "Round robin over the keys with due tasks, priorities ordering each key's tasks;"
                    + " in force on every engine within 500 ms.")
    @PutMapping(path = "/limits/fair", consumes = "application/json")
    public FairnessRequest setFair(@RequestBody FairnessRequest body) {
        if (body == null || body.queue() == null || body.fair() == null) {
            throw new BadRequestException("'queue' and 'fair' (true or false) are required");
        }
        TextChecks.check("queue", body.queue());
        try {
            dbTasks.limits().setFair(body.queue(), body.fair());
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
        return body;
    }

    /**
     * @param queue the queue
     * @return each key of the queue with tasks PENDING or RUNNING: running and waiting counts, and the
     *     limit that applies
     */
    @Operation(summary = "Running and waiting tasks per concurrency key of a queue")
    @GetMapping("/limits/keys")
    public List<KeyLoad> keys(@RequestParam String queue) {
        TextChecks.check("queue", queue);
        return dbTasks.limits().load(queue);
    }
}
