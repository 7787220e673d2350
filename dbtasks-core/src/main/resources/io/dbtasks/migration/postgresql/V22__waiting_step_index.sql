-- WAITING tasks (workflow steps and batch callbacks) counted per queue for the queue-depth gauge,
-- read through this small partial index instead of a scan of the whole task table. A step enters
-- it when it is inserted WAITING and leaves it when its last dependency releases it; tasks outside
-- workflows never enter it. MariaDB counts them through its (status, queue) index; H2 scans.
CREATE INDEX dbtasks_task_waiting_idx ON dbtasks_task (queue) WHERE status = 'WAITING';
