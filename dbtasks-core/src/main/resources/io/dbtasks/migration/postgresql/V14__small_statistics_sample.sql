-- The task table's planner statistics from a sample of 3,000 rows instead of 30,000.
--
-- ANALYZE samples 300 x (the largest statistics target of the columns it analyzes) rows, reading up
-- to that many pages, so at the default target of 100 it reads 30,000 pages: every page of a table of
-- up to about a million tasks. The engine analyzes the table whenever its file has doubled since the
-- last statistics (QueueTableVacuum), and VACUUM (ANALYZE) whenever it holds 10,000 dead rows; both
-- run while the queue is busy. Measured on a 250k-row table (6,757 pages), idle: 176-189 ms per
-- ANALYZE at target 100, 12 ms at 10. Under a latency run (12,000 tasks/s on two cores) the
-- engine's ANALYZEs took 250-460 ms each, and the tasks enqueued during them made the run's slowest
-- 1 %.
--
-- What the plans here need from the statistics is the table's size and the share of each status,
-- queue and kind, which 3,000 rows give well (a value in at least about 0.1 % of them is seen).
--
-- Every column gets the target, because the sample is sized by the largest one: a column added by a
-- later migration must set it too (PostgresStatisticsTest checks that none is left at the default).
DO $$
DECLARE
    col record;
BEGIN
    FOR col IN
        SELECT attname FROM pg_attribute
        WHERE attrelid = 'dbtasks_task'::regclass AND attnum > 0 AND NOT attisdropped
    LOOP
        EXECUTE format('ALTER TABLE dbtasks_task ALTER COLUMN %I SET STATISTICS 10', col.attname);
    END LOOP;
END
$$;
