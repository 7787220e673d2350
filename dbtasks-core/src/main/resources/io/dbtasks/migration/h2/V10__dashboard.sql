-- Operator controls and instance view for the dashboard (issue 13); see the PostgreSQL migration.
CREATE TABLE dbtasks_queue_pause (
    queue      VARCHAR(200) NOT NULL,
    paused_at  TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    paused_by  VARCHAR(200),
    CONSTRAINT dbtasks_queue_pause_pk PRIMARY KEY (queue)
);

CREATE TABLE dbtasks_worker (
    worker_id     VARCHAR(200)  NOT NULL,
    queues        VARCHAR(4000) NOT NULL,
    started_at    TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    heartbeat_at  TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    CONSTRAINT dbtasks_worker_pk PRIMARY KEY (worker_id)
);

CREATE INDEX dbtasks_task_reference_idx ON dbtasks_task (reference, id);
