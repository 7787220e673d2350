-- Operator controls and instance view for the dashboard (issue 13); see the PostgreSQL migration.
CREATE TABLE dbtasks_queue_pause (
    queue      VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    paused_at  DATETIME(6)  NOT NULL,
    paused_by  VARCHAR(200),
    CONSTRAINT dbtasks_queue_pause_pk PRIMARY KEY (queue)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE dbtasks_worker (
    worker_id     VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    queues        VARCHAR(4000) NOT NULL,
    started_at    DATETIME(6)   NOT NULL,
    heartbeat_at  DATETIME(6)   NOT NULL,
    CONSTRAINT dbtasks_worker_pk PRIMARY KEY (worker_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Lookup by business reference (MariaDB has no partial indexes; NULL references share one range).
CREATE INDEX dbtasks_task_reference_idx ON dbtasks_task (reference, id);
