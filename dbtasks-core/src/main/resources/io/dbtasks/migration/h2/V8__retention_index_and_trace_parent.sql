-- Retention deletes finished tasks by status and age.
CREATE INDEX dbtasks_task_finished_idx ON dbtasks_task (status, finished_at);
-- The W3C traceparent of the span that enqueued the task, so its execution continues the trace.
ALTER TABLE dbtasks_task ADD COLUMN trace_parent VARCHAR(128);
