-- Fair claims across concurrency keys.
--
-- A claim of a queue with limits or fairness reads each key's first due tasks on its own, so that
-- its cost does not grow with the tasks waiting behind a key's limit: the keys with PENDING tasks
-- are listed by skipping from key to key in this index, then each key's first tasks in claim order.
-- Partial on PENDING and on a key, so tasks without a key and finished history cost nothing.
CREATE INDEX dbtasks_task_key_claim_idx ON dbtasks_task (queue, concurrency_key, priority DESC, run_at, id)
    WHERE status = 'PENDING' AND concurrency_key IS NOT NULL;

-- Queues whose claims are fair across concurrency keys without any limit: one row per queue,
-- changed at run time. A queue with a limit is fair whether or not it has a row here.
CREATE TABLE dbtasks_fair_queue (
    queue           VARCHAR(200) NOT NULL PRIMARY KEY,
    updated_at      TIMESTAMPTZ  NOT NULL
);
