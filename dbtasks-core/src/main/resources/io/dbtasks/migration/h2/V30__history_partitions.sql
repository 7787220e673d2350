-- The columns and the key table of history partitioned by day (see the PostgreSQL migration). H2
-- keeps one table: history_day is written as elsewhere and names the live rows (0), and retention
-- deletes finished rows. The idempotency key's unique constraint stays beside the key table.
ALTER TABLE dbtasks_task ADD COLUMN history_day INTEGER DEFAULT 0 NOT NULL;
UPDATE dbtasks_task SET history_day = -1 WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED');
ALTER TABLE dbtasks_attempt ADD COLUMN history_day INTEGER DEFAULT -1 NOT NULL;

CREATE TABLE dbtasks_task_key (
    idempotency_key VARCHAR(255) NOT NULL PRIMARY KEY
);
INSERT INTO dbtasks_task_key (idempotency_key)
    SELECT idempotency_key FROM dbtasks_task WHERE idempotency_key IS NOT NULL;
