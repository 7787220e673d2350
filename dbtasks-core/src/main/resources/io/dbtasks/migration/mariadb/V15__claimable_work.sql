-- An engine claims only the tasks it can run; see the PostgreSQL migration. Compared as exact
-- strings, as kinds are. Added last and nullable, so InnoDB adds it in place (instant).
ALTER TABLE dbtasks_task ADD COLUMN job_target VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;

ALTER TABLE dbtasks_worker ADD COLUMN kinds TEXT CHARACTER SET utf8mb4;
ALTER TABLE dbtasks_worker ADD COLUMN job_targets TEXT CHARACTER SET utf8mb4;
