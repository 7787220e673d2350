-- Concurrency keys and limits; see the PostgreSQL migration. Keys and patterns compare as exact
-- strings. The column is added last and nullable, so InnoDB adds it in place (instant).
ALTER TABLE dbtasks_task ADD COLUMN concurrency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
-- Without status, so that claims and outcomes (which change status) leave the index alone; a task
-- without a key has a NULL entry that never changes after the insert.
CREATE INDEX dbtasks_task_concurrency_key_idx ON dbtasks_task (concurrency_key, id);

CREATE TABLE dbtasks_limit (
    queue           VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    key_pattern     VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    max_running     INT          NOT NULL,
    fifo            BOOLEAN      NOT NULL DEFAULT FALSE,
    updated_at      DATETIME(6)  NOT NULL,
    PRIMARY KEY (queue, key_pattern),
    CONSTRAINT dbtasks_limit_running_check CHECK (max_running >= 1)
) ENGINE = InnoDB;

CREATE TABLE dbtasks_concurrency_key (
    queue           VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    concurrency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    PRIMARY KEY (queue, concurrency_key)
) ENGINE = InnoDB;
