-- Counts of finished tasks per hour of finished_at (DATETIME(6) in UTC); see the PostgreSQL
-- migration. Both tables have a primary key, as Galera requires; queue compares as exact strings,
-- as dbtasks_task.queue does.
CREATE TABLE dbtasks_history_hour (
    hour_start  DATETIME(6) NOT NULL PRIMARY KEY,
    counted_at  DATETIME(6),
    changes     BIGINT NOT NULL DEFAULT 0
) ENGINE = InnoDB;

CREATE TABLE dbtasks_history_count (
    hour_start  DATETIME(6)  NOT NULL,
    queue       VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    n           BIGINT       NOT NULL,
    PRIMARY KEY (hour_start, queue, status)
) ENGINE = InnoDB;
