package io.dbtasks.limit;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The concurrency and rate limits of the cluster, stored in {@code dbtasks_limit}.
 *
 * <p><b>The guarantee.</b> A claim that would start a task of a limited key locks the key (a
 * transaction-level advisory lock on PostgreSQL, the key's row in {@code dbtasks_concurrency_key}
 * on MariaDB and H2) and counts the key's RUNNING tasks in the same transaction, so
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
 * <p><b>Queue-wide rates.</b> A queue may also have one rate for all its tasks, whatever their keys
 * and those without one ({@link #setQueueRate}): at most {@code starts} starts of the whole queue in
 * any window of the rate's period, by the database clock, across every engine. A claim of such a
 * queue first locks the queue's row in {@code dbtasks_queue_rate} ({@code SELECT ... FOR UPDATE}, on
 * every database), then counts the queue's logged starts in the window under a reserved key ({@code
 * *}, which no concurrency key can contain) and takes at most what the window leaves, logging its
 * starts in the same transaction, as for a key's rate. Claims of the queue therefore take turns on
 * every engine: a row lock rather than PostgreSQL's advisory key locks, because the row exists
 * exactly while the rate does (nothing to create on first use, so no claim can deadlock creating it)
 * and the claim reads the rate in force from the row it locks. It is taken before any key's lock,
 * so claims that also lock keys take locks in one order. Both the queue's rate and its keys' limits
 * hold. An engine that finds the window full leaves the queue alone until the window frees a start,
 * then comes back for it. A queue without a queue-wide rate claims exactly as before.
 *
 * <p><b>When a change applies.</b> Every engine re-reads the limit rows at most {@link
 * #REFRESH_MILLIS} ms after it last did (and at once after a change made through it), so a limit
 * set, changed or removed anywhere holds on every engine within that time. A lowered limit does not
 * stop tasks already RUNNING; no new task of the key starts until it is under the new limit.
 *
 * <p><b>The cost.</b> A queue without limits, and not {@linkplain #setFair set fair}, claims with one
 * statement as before. A queue whose limits only bound tasks running at once (no rate, no FIFO), not
 * set fair, claims in priority and due-time order across keys in one short transaction: the first due
 * tasks locked, their limited keys locked, those keys' RUNNING tasks counted, the tasks with room
 * started (two statements on PostgreSQL, five on MariaDB and H2). When a key at its limit leaves a task behind, the engine's claims of
 * that queue go round robin (below) until one leaves nothing behind a limit, so a key at its limit
 * never holds back the others. A queue set fair, or with a rate or FIFO limit, always claims round
 * robin (so does a queue with a {@linkplain #setQueueRate queue-wide rate}, with two statements more:
 * the lock of its row with the count of its window, and the log of its starts), in one transaction of
 * a few more statements (the keys with PENDING tasks, their first due
 * tasks, a count of RUNNING tasks by key, the limited keys' rows locked and counted again, the
 * claim); measurements are in BENCHMARKS.md.
 *
 * <p><b>Fairness.</b> A round robin claim takes due tasks round robin over keys (each key's first due task,
 * then each key's second...), priorities ordering the tasks of one key, and is work-conserving. It
 * lists the keys that have PENDING tasks from a rotation kept per queue by each engine (as many as
 * the claim wants plus those known to be at their limit, 8 to 256), with one index probe per key on
 * PostgreSQL and windows of 1,000 index
 * entries in key order elsewhere (one more past each key with a longer backlog); keys at their limit
 * are listed but
 * their tasks are not read, so the claim's cost does not grow with the tasks waiting behind a limit.
 * Tasks without a key count together as one key and are looked for among the first due tasks of the
 * queue only (up to four per wanted task): in a fair queue, give every task a key.
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
     * Makes the claims of {@code queue} fair across concurrency keys, or plain again. A fair claim takes
     * due tasks round robin over the keys that have them (each key's first task, then each key's
     * second...), priorities ordering the tasks of one key, so that one key's backlog does not hold
     * back the others; it is work-conserving (a key alone takes every worker). A queue with limits
     * is fair only while one binds (see the class comment); this setting makes a queue fair always,
     * with or without limits, at the cost of a claim of a few statements more (see the class
     * comment). Stored as a row ({@code dbtasks_fair_queue});
     * in force on every engine within {@link #REFRESH_MILLIS} ms.
     *
     * @param queue the queue, 1 to {@value io.dbtasks.TaskRequest#MAX_NAME_LENGTH} characters
     * @param fair true for fair claims, false for claims in priority and run time order alone
     * @throws IllegalArgumentException if the queue is blank or too long
     * @throws NullPointerException if the queue is {@code null}
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    void setFair(String queue, boolean fair);

    /**
     * @return the queues set fair with {@link #setFair}, by name, read from the database now (queues
     *     with a rate or FIFO limit claim round robin as well, set or not)
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    List<String> fairQueues();

    /**
     * Sets the queue-wide rate of {@code queue}, replacing the one it has: at most {@code
     * rate.starts()} task starts of the queue, whatever their concurrency keys (tasks without one
     * included), in any window of {@code rate.period()}, by the database clock, across every engine
     * (see the class comment). It holds together with the queue's limits per key. Every start counts:
     * the first, a retry's, and a start after the rescue of a dead worker's task. Stored as a row
     * ({@code dbtasks_queue_rate}); in force on every engine within {@link #REFRESH_MILLIS} ms. A
     * lowered rate stops no task already RUNNING; the queue starts nothing until its window has room.
     *
     * @param queue the queue, 1 to {@value io.dbtasks.TaskRequest#MAX_NAME_LENGTH} characters
     * @param rate the rate of the whole queue
     * @throws IllegalArgumentException if the queue is blank or too long
     * @throws NullPointerException if the queue or rate is {@code null}
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    void setQueueRate(String queue, Rate rate);

    /**
     * Removes the queue-wide rate of {@code queue}; its limits per key stay. Its backlog starts as
     * fast as its workers and key limits allow, on every engine within {@link #REFRESH_MILLIS} ms.
     *
     * @param queue the queue
     * @return whether it had one
     * @throws NullPointerException if the queue is {@code null}
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    boolean removeQueueRate(String queue);

    /**
     * @param queue the queue
     * @return its queue-wide rate, read from the database now, or empty if it has none
     * @throws NullPointerException if the queue is {@code null}
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    Optional<Rate> queueRate(String queue);

    /**
     * @return every queue-wide rate by queue, in queue name order, read from the database now; empty
     *     if no queue has one
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    Map<String, Rate> queueRates();

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
     * read now; or, for any task of a queue whose {@linkplain #setQueueRate queue-wide rate} has no
     * room, {@code waiting for rate limit of queue q: 10 starts per 1s} (a reason of its key first).
     *
     * @param taskId the task
     * @return the reason, or empty if the task is not PENDING, is not due yet (its run time, or the
     *     backoff before a retry, has not come), or neither its key (if it has one) is at its limit
     *     or rate nor its queue at its queue-wide rate
     * @throws io.dbtasks.DbTasksException if the database cannot be reached
     */
    Optional<String> waitReason(long taskId);
}
