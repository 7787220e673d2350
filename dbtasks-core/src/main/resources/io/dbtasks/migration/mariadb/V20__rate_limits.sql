-- Rate limits per concurrency key; see the PostgreSQL migration. The table has a primary key, as
-- Galera requires.
ALTER TABLE dbtasks_limit ADD COLUMN rate_starts INT;
ALTER TABLE dbtasks_limit ADD COLUMN rate_period_ms BIGINT;
ALTER TABLE dbtasks_limit ADD CONSTRAINT dbtasks_limit_rate_check CHECK (
    (rate_starts IS NULL AND rate_period_ms IS NULL)
    OR (rate_starts >= 1 AND rate_period_ms >= 1));

CREATE TABLE dbtasks_rate_start (
    queue           VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    concurrency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    started_at      DATETIME(6)  NOT NULL,
    task_id         BIGINT       NOT NULL,
    expires_at      DATETIME(6)  NOT NULL,
    PRIMARY KEY (queue, concurrency_key, started_at, task_id)
) ENGINE = InnoDB;
CREATE INDEX dbtasks_rate_start_expires_idx ON dbtasks_rate_start (expires_at);
