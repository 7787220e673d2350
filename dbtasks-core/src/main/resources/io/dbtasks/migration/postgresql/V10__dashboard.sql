-- Operator controls and instance view for the dashboard (issue 13).

-- A paused queue: while its row exists no engine claims its tasks (each engine re-reads this small
-- table at most once per poll interval); enqueues still succeed. Resume deletes the row.
CREATE TABLE dbtasks_queue_pause (
    queue      VARCHAR(200) NOT NULL,
    paused_at  TIMESTAMPTZ  NOT NULL,
    paused_by  VARCHAR(200),
    CONSTRAINT dbtasks_queue_pause_pk PRIMARY KEY (queue)
);

-- Live engines: one row per worker id, written at start, touched every heartbeat interval,
-- deleted at a clean stop. A row whose heartbeat is old belongs to a crashed engine.
CREATE TABLE dbtasks_worker (
    worker_id     VARCHAR(200)  NOT NULL,
    queues        VARCHAR(4000) NOT NULL,
    started_at    TIMESTAMPTZ   NOT NULL,
    heartbeat_at  TIMESTAMPTZ   NOT NULL,
    CONSTRAINT dbtasks_worker_pk PRIMARY KEY (worker_id)
);

-- Looking a task up by its business reference (the dashboard's reference filter) would otherwise
-- scan the whole table. Partial: only tasks that carry a reference pay for an index entry per
-- update, so the claim-and-complete path of tasks without one is unchanged.
CREATE INDEX dbtasks_task_reference_idx ON dbtasks_task (reference, id) WHERE reference IS NOT NULL;
