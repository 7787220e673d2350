-- Concurrency keys and limits; see the PostgreSQL migration.
ALTER TABLE dbtasks_task ADD COLUMN concurrency_key VARCHAR(255);
CREATE INDEX dbtasks_task_concurrency_key_idx ON dbtasks_task (concurrency_key, status, id);

CREATE TABLE dbtasks_limit (
    queue           VARCHAR(200) NOT NULL,
    key_pattern     VARCHAR(255) NOT NULL,
    max_running     INT,
    fifo            BOOLEAN      NOT NULL DEFAULT FALSE,
    rate_starts     INT,
    rate_window_ms  BIGINT,
    updated_at      TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    PRIMARY KEY (queue, key_pattern),
    CONSTRAINT dbtasks_limit_running_check CHECK (max_running IS NULL OR max_running >= 1),
    CONSTRAINT dbtasks_limit_rate_check CHECK ((rate_starts IS NULL AND rate_window_ms IS NULL)
        OR (rate_starts >= 1 AND rate_window_ms >= 1))
);

CREATE TABLE dbtasks_concurrency_key (
    queue           VARCHAR(200) NOT NULL,
    concurrency_key VARCHAR(255) NOT NULL,
    next_start_at   TIMESTAMP(6) WITH TIME ZONE,
    PRIMARY KEY (queue, concurrency_key)
);
