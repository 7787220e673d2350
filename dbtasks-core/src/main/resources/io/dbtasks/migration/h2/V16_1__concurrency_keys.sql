-- Concurrency keys and limits; see the PostgreSQL migration.
ALTER TABLE dbtasks_task ADD COLUMN concurrency_key VARCHAR(255);
-- Without status, so that claims and outcomes (which change status) leave the index alone; a task
-- without a key has a NULL entry that never changes after the insert.
CREATE INDEX dbtasks_task_concurrency_key_idx ON dbtasks_task (concurrency_key, id);

CREATE TABLE dbtasks_limit (
    queue           VARCHAR(200) NOT NULL,
    key_pattern     VARCHAR(255) NOT NULL,
    max_running     INT          NOT NULL,
    fifo            BOOLEAN      NOT NULL DEFAULT FALSE,
    updated_at      TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    PRIMARY KEY (queue, key_pattern),
    CONSTRAINT dbtasks_limit_running_check CHECK (max_running >= 1)
);

CREATE TABLE dbtasks_concurrency_key (
    queue           VARCHAR(200) NOT NULL,
    concurrency_key VARCHAR(255) NOT NULL,
    PRIMARY KEY (queue, concurrency_key)
);
