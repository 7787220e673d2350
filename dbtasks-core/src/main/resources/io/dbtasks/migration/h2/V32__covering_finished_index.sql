-- The finished index carries the queue, (status, finished_at, queue), as on MariaDB (see its V32):
-- the overview and the hourly count read the queue of the finished rows from the index alone.
DROP INDEX dbtasks_task_finished_idx;
CREATE INDEX dbtasks_task_finished_idx ON dbtasks_task (status, finished_at, queue);
