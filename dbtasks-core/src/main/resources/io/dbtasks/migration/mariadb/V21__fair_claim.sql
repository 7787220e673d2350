-- Fair claims across concurrency keys; see the PostgreSQL migration. MariaDB has no partial index:
-- pending_key is the key of a PENDING task and NULL otherwise, a virtual column (computed, not
-- stored), so the index entry of a task without a key never changes and a claim or an outcome of
-- such a task leaves this index alone.
ALTER TABLE dbtasks_task ADD COLUMN pending_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin
    AS (CASE WHEN status = 'PENDING' THEN concurrency_key END) VIRTUAL;
CREATE INDEX dbtasks_task_key_claim_idx ON dbtasks_task (queue, pending_key, priority DESC, run_at, id);

CREATE TABLE dbtasks_fair_queue (
    queue           VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    updated_at      DATETIME(6)  NOT NULL
) ENGINE = InnoDB;
