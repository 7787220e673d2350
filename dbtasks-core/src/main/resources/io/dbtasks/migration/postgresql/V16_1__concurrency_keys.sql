-- Concurrency keys and limits.
--
-- concurrency_key: what a limit counts by (a tenant, a customer, an API host), NULL for a task no
-- limit applies to. Nullable with no default: adding it rewrites nothing.
ALTER TABLE dbtasks_task ADD COLUMN concurrency_key VARCHAR(255);
ALTER TABLE dbtasks_task ALTER COLUMN concurrency_key SET STATISTICS 10;
-- A limited claim counts a key's RUNNING tasks (and finds its oldest unfinished one, for FIFO);
-- only rows with a key are indexed.
CREATE INDEX dbtasks_task_concurrency_key_idx ON dbtasks_task (concurrency_key, status, id)
    WHERE concurrency_key IS NOT NULL;

-- Limits, changed at run time: per queue, an exact key, a pattern ('*' matches any run of
-- characters) or '*' alone, the default for every key of the queue. max_running: at most that many
-- tasks of one key RUNNING at once (NULL: no concurrency limit). fifo: a key's tasks start one at a
-- time in enqueue order. rate_starts per rate_window_ms: at most that many starts of one key per
-- window (both NULL: no rate limit).
CREATE TABLE dbtasks_limit (
    queue           VARCHAR(200) NOT NULL,
    key_pattern     VARCHAR(255) NOT NULL,
    max_running     INT,
    fifo            BOOLEAN      NOT NULL DEFAULT FALSE,
    rate_starts     INT,
    rate_window_ms  BIGINT,
    updated_at      TIMESTAMPTZ  NOT NULL,
    PRIMARY KEY (queue, key_pattern),
    CONSTRAINT dbtasks_limit_running_check CHECK (max_running IS NULL OR max_running >= 1),
    CONSTRAINT dbtasks_limit_rate_check CHECK ((rate_starts IS NULL AND rate_window_ms IS NULL)
        OR (rate_starts >= 1 AND rate_window_ms >= 1))
);

-- One row per limited key of a queue, locked by every claim that starts a task of the key, so that
-- claims of one key on any engine count its RUNNING tasks one after another. next_start_at: the
-- rate limit's theoretical arrival time (GCRA), NULL before the first limited start.
CREATE TABLE dbtasks_concurrency_key (
    queue           VARCHAR(200) NOT NULL,
    concurrency_key VARCHAR(255) NOT NULL,
    next_start_at   TIMESTAMPTZ,
    PRIMARY KEY (queue, concurrency_key)
);
