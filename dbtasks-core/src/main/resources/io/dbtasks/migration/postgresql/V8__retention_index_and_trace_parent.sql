-- Retention deletes finished tasks by status and age. Partial, so a task enters it once, when it
-- finishes; claims and heartbeats of PENDING and RUNNING rows never touch it.
CREATE INDEX dbtasks_task_finished_idx ON dbtasks_task (status, finished_at)
    WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED');
-- The W3C traceparent of the span that enqueued the task, so its execution continues the trace.
ALTER TABLE dbtasks_task ADD COLUMN trace_parent VARCHAR(128);
