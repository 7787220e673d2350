-- Fair claims across concurrency keys; see the PostgreSQL migration.
CREATE INDEX dbtasks_task_key_claim_idx ON dbtasks_task (queue, status, concurrency_key, priority DESC, run_at, id);

CREATE TABLE dbtasks_fair_queue (
    queue           VARCHAR(200) NOT NULL PRIMARY KEY,
    updated_at      TIMESTAMP(6) WITH TIME ZONE NOT NULL
);
