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
-- tasks of one key RUNNING at once. fifo: a key's tasks start one at a time in enqueue order.
CREATE TABLE dbtasks_limit (
    queue           VARCHAR(200) NOT NULL,
    key_pattern     VARCHAR(255) NOT NULL,
    max_running     INT          NOT NULL,
    fifo            BOOLEAN      NOT NULL DEFAULT FALSE,
    updated_at      TIMESTAMPTZ  NOT NULL,
    PRIMARY KEY (queue, key_pattern),
    CONSTRAINT dbtasks_limit_running_check CHECK (max_running >= 1)
);

-- One row per limited key of a queue, locked by every claim that starts a task of the key, so that
-- claims of one key on any engine count its RUNNING tasks one after another.
CREATE TABLE dbtasks_concurrency_key (
    queue           VARCHAR(200) NOT NULL,
    concurrency_key VARCHAR(255) NOT NULL,
    PRIMARY KEY (queue, concurrency_key)
);
