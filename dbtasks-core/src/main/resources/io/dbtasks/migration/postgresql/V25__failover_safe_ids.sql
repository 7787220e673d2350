-- Ids and fencing tokens that no failover hands out twice.
--
-- A promoted standby's sequences resume from the last value logged in the WAL it received; under
-- asynchronous replication values the old primary handed out in WAL that never arrived are handed
-- out again. Every promotion (and every point-in-time recovery) starts a new timeline, greater than
-- every timeline before it in that history, so a value that carries the timeline in its high bits
-- is greater than every value issued on an earlier timeline, lost or not:
--
--     value = timeline << 40 | nextval(sequence)
--
-- The timeline is the one WAL is inserted on now, read per statement, never cached: it changes at
-- promotion itself, before any checkpoint (pg_control_checkpoint() would lag until the first one).
-- 2^40 - 1 values per sequence (a sequence past it fails its nextval rather than spill into the
-- timeline bits); timelines below 2^13 keep values below 2^53, exact in a JavaScript number.
-- Existing ids and tokens stay as they are: all below 2^40, below every new one.
--
-- After an upgrade with pg_upgrade, or a restore into a new cluster, the timeline starts at 1 again:
-- redefine dbtasks_epoch() as the timeline plus the highest epoch issued before (see
-- docs/operations.md) so that new values stay above the old ones.
CREATE FUNCTION dbtasks_epoch() RETURNS BIGINT
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
    AS $$ SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint $$;

CREATE FUNCTION dbtasks_next_id(seq regclass) RETURNS BIGINT
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
    AS $$ SELECT (dbtasks_epoch() << 40) | nextval(seq) $$;

CREATE FUNCTION dbtasks_next_token() RETURNS BIGINT
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
    AS $$ SELECT (dbtasks_epoch() << 40) | nextval('dbtasks_token_seq') $$;

ALTER SEQUENCE dbtasks_token_seq MAXVALUE 1099511627775 NO CYCLE;

-- The ids clients are given: tasks, workflows, batches and job definitions. An identity column
-- takes no other default, so each becomes a plain column with a default from its own sequence.
-- Attempt ids stay dense (the dashboard reads attempts in id ranges).
ALTER TABLE dbtasks_task ALTER COLUMN id DROP IDENTITY;
CREATE SEQUENCE dbtasks_task_id_seq MAXVALUE 1099511627775 NO CYCLE OWNED BY dbtasks_task.id;
ALTER TABLE dbtasks_task ALTER COLUMN id SET DEFAULT dbtasks_next_id('dbtasks_task_id_seq');

ALTER TABLE dbtasks_workflow ALTER COLUMN id DROP IDENTITY;
CREATE SEQUENCE dbtasks_workflow_id_seq MAXVALUE 1099511627775 NO CYCLE OWNED BY dbtasks_workflow.id;
ALTER TABLE dbtasks_workflow ALTER COLUMN id SET DEFAULT dbtasks_next_id('dbtasks_workflow_id_seq');

ALTER TABLE dbtasks_batch ALTER COLUMN id DROP IDENTITY;
CREATE SEQUENCE dbtasks_batch_id_seq MAXVALUE 1099511627775 NO CYCLE OWNED BY dbtasks_batch.id;
ALTER TABLE dbtasks_batch ALTER COLUMN id SET DEFAULT dbtasks_next_id('dbtasks_batch_id_seq');

ALTER TABLE dbtasks_job ALTER COLUMN id DROP IDENTITY;
CREATE SEQUENCE dbtasks_job_id_seq MAXVALUE 1099511627775 NO CYCLE OWNED BY dbtasks_job.id;
ALTER TABLE dbtasks_job ALTER COLUMN id SET DEFAULT dbtasks_next_id('dbtasks_job_id_seq');
