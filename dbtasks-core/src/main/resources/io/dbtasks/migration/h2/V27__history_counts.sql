-- Counts of finished tasks per hour of finished_at; see the PostgreSQL migration.
CREATE TABLE dbtasks_history_hour (
    hour_start  TIMESTAMP(6) WITH TIME ZONE NOT NULL PRIMARY KEY,
    counted_at  TIMESTAMP(6) WITH TIME ZONE,
    changes     BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE dbtasks_history_count (
    hour_start  TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    queue       VARCHAR(200) NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    n           BIGINT       NOT NULL,
    PRIMARY KEY (hour_start, queue, status)
);
