-- Queue-wide rate limits: at most rate_starts task starts of the whole queue, whatever their
-- concurrency keys, in any window of rate_period_ms milliseconds (sliding, by the database clock).
-- One row per rated queue, changed at run time. A claim of such a queue locks this row first
-- (SELECT ... FOR UPDATE), so claims of the queue take turns on every engine, and counts the
-- queue's starts in dbtasks_rate_start under the reserved key '*', which no concurrency key can take.
CREATE TABLE dbtasks_queue_rate (
    queue           VARCHAR(200) NOT NULL PRIMARY KEY,
    rate_starts     INT          NOT NULL CHECK (rate_starts >= 1),
    rate_period_ms  BIGINT       NOT NULL CHECK (rate_period_ms >= 1),
    updated_at      TIMESTAMPTZ  NOT NULL
);
