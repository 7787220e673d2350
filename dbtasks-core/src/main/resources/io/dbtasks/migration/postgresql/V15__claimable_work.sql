-- An engine claims only the tasks it can run.
--
-- job_target: for a job run (kind dbtasks.job), the method it calls as bean.method(types), the
-- form the engines' allow-lists use, written in the transaction that enqueues the run; NULL for
-- every other task and for runs enqueued before this version. A claim that names its engine's
-- allow-listed targets skips runs of other targets. Nullable with no default: adding it rewrites
-- nothing.
ALTER TABLE dbtasks_task ADD COLUMN job_target VARCHAR(1000);
-- Sampled like every other column of the task table (see V14): a small ANALYZE sample.
ALTER TABLE dbtasks_task ALTER COLUMN job_target SET STATISTICS 10;

-- What each live engine can run, so that a task no live engine of its queue can run is told apart
-- from one waiting for another engine: kinds, one per line (NULL for an engine of an older version,
-- which claims every kind), and job targets, one per line (NULL where the engine calls any target,
-- or has no job kind).
ALTER TABLE dbtasks_worker ADD COLUMN kinds TEXT;
ALTER TABLE dbtasks_worker ADD COLUMN job_targets TEXT;
