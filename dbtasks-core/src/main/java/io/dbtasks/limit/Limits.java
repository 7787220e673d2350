package io.dbtasks.limit;

import java.util.List;
import java.util.Optional;

/**
 * The concurrency and rate limits of the cluster, stored in {@code dbtasks_limit}.
 *
 * <p><b>The guarantee.</b> A claim that would start a task of a limited key locks the key's row
 * ({@code dbtasks_concurrency_key}) and counts the key's RUNNING tasks in the same transaction, so
 * claims of one key on every engine take turns and never start more than the limit allows. A
 * RUNNING task counts until it leaves RUNNING: when its worker dies (or pauses past its lease) it
 * keeps its place until the rescue moves it back to PENDING, and a paused worker's late writes are
 * refused by its fencing token as always, so a limit of 1 never has two runs' effects overlap.
 *
 * <p><b>Timeouts and shutdown.</b> When a handler times out, or a shutdown hands its task back, the
 * task stops counting against its key when that outcome is written. A handler thread that ignores
 * interrupts may still be running then, next to the task that starts in its place: the fencing token
 * guards the database effects only (a transactional handler's writes, the completion).
 *
 * <p><b>Rates.</b> A limit with a {@link Rate} also lets a key start at most {@code starts} tasks in
 * any window of the rate's period: the same claim, under the same key lock, counts the key's logged
 * starts in the window and logs the starts it makes in its own transaction; see {@link Rate}.
 *
 * <p><b>When a change applies.</b> Every engine re-reads the limit rows at most {@link
 * #REFRESH_MILLIS} ms after it last did (and at once after a change made through it), so a limit
 * set, changed or removed anywhere holds on every engine within that time. A lowered limit does not
 * stop tasks already RUNNING; no new task of the key starts until it is under the new limit.
 *
 * <p><b>The cost.</b> A queue without limits claims with one statement as before. A queue with at
 * least one limit claims in one short transaction of a few statements (a count of RUNNING tasks by
 * key, the due candidates, the key rows locked, the count again, the claim), whatever the keys of its
 * tasks; measurements are in BENCHMARKS.md.
 *
 * <p><b>Fairness, and its current limits.</b> A claim takes due tasks round robin over keys among the
 * first 400 due tasks of the queue in claim order, keys at their limit left out. A key below its
 * limit whose tasks fill those 400 can hold other keys back until its tasks start; a queue without
 * limits has no per-key fairness; and keys at their limit are filtered out while the claim reads its
 * index, so the claim's cost grows with the backlog of the keys at their limit.
 *
 * <p>Thread-safe.
 */
public interface Limits {
    /** How long an engine may keep its copy of the limit rows, in milliseconds. */
    long REFRESH_MILLIS = 500;

    /**
     * Sets a limit, replacing the limit of the same queue and key pattern if there is one.
     *
     * @param limit the limit
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    void set(Limit limit);

    /**
     * Removes the limit of {@code queue} and {@code keyPattern}.
     *
     * @param queue the queue
     * @param keyPattern the key pattern exactly as set
     * @return whether there was one
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    boolean remove(String queue, String keyPattern);

    /**
     * @return every limit, by queue and key pattern, read from the database now
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    List<Limit> list();

    /**
     * @param queue the queue
     * @param key a concurrency key
     * @return the limit that applies to the key's tasks in that queue, read now, or empty
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    Optional<Limit> limitFor(String queue, String key);

    /**
     * Per-key load of a queue: each key with tasks PENDING or RUNNING, with the limit that applies.
     *
     * @param queue the queue
     * @return the keys, by key; empty when the queue has no keyed task in flight
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    List<KeyLoad> load(String queue);

    /**
     * Why a PENDING task is held back by its key's limit, such as {@code waiting for limit of key k:
     * 3/3 running}, {@code waiting for the earlier task of key k} (FIFO), or {@code waiting for rate
     * limit of key k: 10 starts per 1s} (the key's starts in the window ending now reach its rate),
     * read now.
     *
     * @param taskId the task
     * @return the reason, or empty if the task is not PENDING, is not due yet (its run time, or the
     *     backoff before a retry, has not come), has no key, or its key is not at its limit or rate
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    Optional<String> waitReason(long taskId);
}
