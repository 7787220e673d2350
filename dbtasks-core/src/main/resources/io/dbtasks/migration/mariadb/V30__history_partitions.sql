-- History partitioned by day: live tasks in one small partition, finished tasks by the day they
-- finished; see the PostgreSQL migration.
--
-- dbtasks_task and dbtasks_attempt become tables partitioned BY RANGE (history_day), an INT: 0 for
-- a live task (WAITING, PENDING, RUNNING), in the partition p_live; for a finished task the day its
-- finished_at falls in, as days since 1970-01-01 UTC, in that day's partition pYYYYMMDD. A settle
-- that finishes a task writes history_day with finished_at, and InnoDB moves the row into the day's
-- partition in the same statement; a retry or run-now of a finished task writes 0 and moves it
-- back. An attempt row lives in the partition of the day it ended. Claims, heartbeats and settles
-- name history_day = 0, so MariaDB prunes them to p_live, whose size does not depend on history.
-- Retention removes a day with ALTER TABLE ... DROP PARTITION on both tables, which leaves no
-- deleted rows behind and returns the space at once. The engine adds each day's partitions ahead
-- of time (ADD PARTITION, at the end of the range: there is no MAXVALUE partition, so that days can
-- be added).
--
-- A RANGE partition holds every value from the previous partition's bound up to its own: p_legacy
-- holds day -1, p_live day 0, and the first day partition every day from 1 to its own, so rows of
-- any earlier day still have a partition.
--
-- MariaDB requires every unique key of a partitioned table to contain the partition key, and the
-- AUTO_INCREMENT column to lead an index: the primary key becomes (id, history_day). The
-- idempotency key's uniqueness moves to dbtasks_task_key: a keyed enqueue inserts the key there
-- first, in the enqueue's transaction, and retention deletes it with its task; the task table keeps
-- a plain index on the key for lookups. A workflow step's name is unique by construction (a
-- workflow's steps are inserted together and checked first); its index stays, not unique. A
-- partitioned InnoDB table can have neither foreign keys nor FULLTEXT indexes; the task tables have
-- none. The virtual column pending_key (V21) and its index are allowed and stay.
--
-- Existing rows: finished tasks and all attempts get day -1 (p_legacy), which retention drops whole
-- once the newest finished task in it is older than the longest retention; live tasks get day 0.
-- The columns are added in place (instant) and only the live rows are written; then one ALTER per
-- table rebuilds it (ALGORITHM=COPY, writes to the table wait meanwhile) into its partitions with
-- the new keys. On a large history, run the migration when the engines are stopped or quiet.

-- 1. The day column: -1 for every existing row, then 0 for the few live tasks.
ALTER TABLE dbtasks_task ADD COLUMN history_day INT NOT NULL DEFAULT -1;
UPDATE dbtasks_task SET history_day = 0 WHERE status IN ('WAITING', 'PENDING', 'RUNNING');
ALTER TABLE dbtasks_attempt ADD COLUMN history_day INT NOT NULL DEFAULT -1;

-- 2. Idempotency keys, unique across live tasks and history, compared as exact strings (V2_1).
CREATE TABLE dbtasks_task_key (
    idempotency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
INSERT INTO dbtasks_task_key (idempotency_key)
    SELECT idempotency_key FROM dbtasks_task WHERE idempotency_key IS NOT NULL;

-- 3. The partitions: day -1, the live day 0, and yesterday to a week ahead by the database's UTC
-- clock (the engine adds the following days).
SET @dbtasks_days = (
    WITH RECURSIVE d (n) AS (SELECT -1 UNION ALL SELECT n + 1 FROM d WHERE n < 7)
    SELECT GROUP_CONCAT(
        CONCAT('PARTITION p', DATE_FORMAT(UTC_DATE() + INTERVAL n DAY, '%Y%m%d'),
            ' VALUES LESS THAN (', TO_DAYS(UTC_DATE()) - 719528 + n + 1, ')')
        ORDER BY n SEPARATOR ', ')
    FROM d);
SET @dbtasks_partitions = CONCAT(' PARTITION BY RANGE (history_day) (',
    'PARTITION p_legacy VALUES LESS THAN (0), PARTITION p_live VALUES LESS THAN (1), ', @dbtasks_days, ')');

-- The task table: new rows are live (day 0); the keys as above.
SET @dbtasks_sql = CONCAT('ALTER TABLE dbtasks_task',
    ' ALTER COLUMN history_day SET DEFAULT 0,',
    ' DROP PRIMARY KEY, ADD PRIMARY KEY (id, history_day),',
    ' DROP INDEX dbtasks_task_key_unique, ADD INDEX dbtasks_task_key_idx (idempotency_key),',
    ' DROP INDEX dbtasks_task_workflow_step_idx, ADD INDEX dbtasks_task_workflow_step_idx (workflow_id, step)',
    @dbtasks_partitions);
PREPARE dbtasks_stmt FROM @dbtasks_sql;
EXECUTE dbtasks_stmt;
DEALLOCATE PREPARE dbtasks_stmt;

-- The attempt table: every insert names its day, so the column has no default.
SET @dbtasks_sql = CONCAT('ALTER TABLE dbtasks_attempt',
    ' ALTER COLUMN history_day DROP DEFAULT,',
    ' DROP PRIMARY KEY, ADD PRIMARY KEY (id, history_day)',
    @dbtasks_partitions);
PREPARE dbtasks_stmt FROM @dbtasks_sql;
EXECUTE dbtasks_stmt;
DEALLOCATE PREPARE dbtasks_stmt;

SET @dbtasks_days = NULL, @dbtasks_partitions = NULL, @dbtasks_sql = NULL;
