-- An engine claims only the tasks it can run; see the PostgreSQL migration.
ALTER TABLE dbtasks_task ADD COLUMN job_target VARCHAR(1000);

ALTER TABLE dbtasks_worker ADD COLUMN kinds VARCHAR(1000000);
ALTER TABLE dbtasks_worker ADD COLUMN job_targets VARCHAR(1000000);
