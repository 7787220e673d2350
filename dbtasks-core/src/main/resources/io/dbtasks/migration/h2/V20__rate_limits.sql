-- Rate limits per concurrency key; see the PostgreSQL migration.
ALTER TABLE dbtasks_limit ADD COLUMN rate_starts INT;
ALTER TABLE dbtasks_limit ADD COLUMN rate_period_ms BIGINT;
ALTER TABLE dbtasks_limit ADD CONSTRAINT dbtasks_limit_rate_check CHECK (
    (rate_starts IS NULL AND rate_period_ms IS NULL)
    OR (rate_starts >= 1 AND rate_period_ms >= 1));

CREATE TABLE dbtasks_rate_start (
    queue           VARCHAR(200) NOT NULL,
    concurrency_key VARCHAR(255) NOT NULL,
    started_at      TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    task_id         BIGINT       NOT NULL,
    expires_at      TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    PRIMARY KEY (queue, concurrency_key, started_at, task_id)
);
CREATE INDEX dbtasks_rate_start_expires_idx ON dbtasks_rate_start (expires_at);
