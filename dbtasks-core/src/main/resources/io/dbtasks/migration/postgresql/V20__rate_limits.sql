-- Rate limits per concurrency key: at most rate_starts task starts of one key in any window of
-- rate_period_ms milliseconds (sliding, by the database clock). Both NULL for a limit without a
-- rate. A limit with a rate and no concurrency limit stores max_running 2147483647.
ALTER TABLE dbtasks_limit ADD COLUMN rate_starts INT;
ALTER TABLE dbtasks_limit ADD COLUMN rate_period_ms BIGINT;
ALTER TABLE dbtasks_limit ADD CONSTRAINT dbtasks_limit_rate_check CHECK (
    (rate_starts IS NULL AND rate_period_ms IS NULL)
    OR (rate_starts >= 1 AND rate_period_ms >= 1));

-- The sliding log of a rate-limited key's starts: one row per start (a retry's start included),
-- inserted by the claim in its own transaction (so a claim rolled back leaves none) with the task's
-- started_at, and pruned by later claims under the key's row lock. expires_at (started_at plus the
-- window in force at the start) lets the retention sweep delete the rows of keys no claim visits.
CREATE TABLE dbtasks_rate_start (
    queue           VARCHAR(200) NOT NULL,
    concurrency_key VARCHAR(255) NOT NULL,
    started_at      TIMESTAMPTZ  NOT NULL,
    task_id         BIGINT       NOT NULL,
    expires_at      TIMESTAMPTZ  NOT NULL,
    PRIMARY KEY (queue, concurrency_key, started_at, task_id)
);
CREATE INDEX dbtasks_rate_start_expires_idx ON dbtasks_rate_start (expires_at);
