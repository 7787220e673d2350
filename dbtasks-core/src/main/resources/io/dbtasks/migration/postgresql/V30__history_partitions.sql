-- History partitioned by day: live tasks in one small partition, finished tasks by the day they
-- finished.
--
-- dbtasks_task and dbtasks_attempt become tables partitioned BY RANGE (history_day), an INTEGER:
-- 0 for a live task (WAITING, PENDING, RUNNING), in the partition dbtasks_task_live; for a finished
-- task the day its finished_at falls in, as days since 1970-01-01 UTC, in that day's partition
-- (dbtasks_task_pYYYYMMDD). A settle that finishes a task writes history_day with finished_at, and
-- PostgreSQL moves the row into the day's partition in the same statement; a retry or run-now of a
-- finished task writes 0 and moves it back. An attempt row lives in the partition of the day it
-- ended (dbtasks_attempt_pYYYYMMDD). Claims, heartbeats and settles name history_day = 0, so they
-- read only the live partition, whose size and statistics do not depend on history. Retention
-- removes a day by dropping its two partitions (dbtasks_drop_history_day), which leaves no dead rows
-- and returns the space at once. The engine creates each day's partitions ahead of time
-- (dbtasks_create_history_days).
--
-- A unique index of a partitioned table must contain the partition key, so the idempotency key's
-- uniqueness moves to dbtasks_task_key: a keyed enqueue inserts the key there first, in the
-- enqueue's transaction, and retention deletes it with its task. A workflow step's name is unique
-- by construction (a workflow's steps are inserted together and checked first); its index stays
-- for lookups.
--
-- Existing rows: live tasks move into the live partition. Finished tasks and all attempts stay in
-- their tables, renamed dbtasks_task_legacy and dbtasks_attempt_legacy and attached as the
-- partitions of history_day -1, which retention drops whole once the newest finished task in it is
-- older than the longest retention. The migration reads the legacy tables once to check their rows
-- against the new partition bounds and builds one index (id, history_day) on each; it rewrites no
-- history. An installation without finished tasks drops the empty legacy tables instead.

-- 1. The old tables step aside, their index names with them.
ALTER TABLE dbtasks_task RENAME TO dbtasks_task_legacy;
ALTER TABLE dbtasks_attempt RENAME TO dbtasks_attempt_legacy;
DROP STATISTICS IF EXISTS dbtasks_task_queue_status;
DO $$
DECLARE
    i record;
BEGIN
    FOR i IN
        SELECT c.relname
        FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
        WHERE x.indrelid IN ('dbtasks_task_legacy'::regclass, 'dbtasks_attempt_legacy'::regclass)
    LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', i.relname,
            regexp_replace(i.relname, '^dbtasks_(task|attempt)_', 'dbtasks_\1_legacy_'));
    END LOOP;
END $$;

-- 2. The partitioned tables, with the old columns, defaults and checks, and the same indexes.
CREATE TABLE dbtasks_task (
    LIKE dbtasks_task_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
    history_day INTEGER NOT NULL DEFAULT 0
) PARTITION BY RANGE (history_day);
ALTER SEQUENCE dbtasks_task_id_seq OWNED BY NONE;
ALTER SEQUENCE dbtasks_task_id_seq OWNED BY dbtasks_task.id;
ALTER TABLE dbtasks_task ADD CONSTRAINT dbtasks_task_pkey PRIMARY KEY (id, history_day);
CREATE INDEX dbtasks_task_claim_idx ON dbtasks_task (queue, priority DESC, run_at, id) WHERE status = 'PENDING';
CREATE INDEX dbtasks_task_key_claim_idx ON dbtasks_task (queue, concurrency_key, priority DESC, run_at, id)
    WHERE status = 'PENDING' AND concurrency_key IS NOT NULL;
CREATE INDEX dbtasks_task_rescue_idx ON dbtasks_task (lease_expires_at) WHERE status = 'RUNNING';
CREATE INDEX dbtasks_task_waiting_idx ON dbtasks_task (queue) WHERE status = 'WAITING';
CREATE INDEX dbtasks_task_concurrency_key_idx ON dbtasks_task (concurrency_key, status, id)
    WHERE concurrency_key IS NOT NULL;
CREATE INDEX dbtasks_task_finished_idx ON dbtasks_task (status, finished_at)
    WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED');
CREATE INDEX dbtasks_task_unsuccessful_idx ON dbtasks_task (id) WHERE status IN ('FAILED', 'CANCELLED');
CREATE INDEX dbtasks_task_key_idx ON dbtasks_task (idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX dbtasks_task_reference_idx ON dbtasks_task (reference, id) WHERE reference IS NOT NULL;
CREATE INDEX dbtasks_task_workflow_step_idx ON dbtasks_task (workflow_id, step) WHERE workflow_id IS NOT NULL;

-- Live rows are updated in place (claims, heartbeats), hence the free space per page; see V3.
CREATE TABLE dbtasks_task_live PARTITION OF dbtasks_task FOR VALUES FROM (0) TO (1) WITH (
    fillfactor = 80,
    autovacuum_vacuum_scale_factor = 0.0,
    autovacuum_vacuum_threshold = 10000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_analyze_scale_factor = 0.02
);
-- The live partition's indexes carry their parents' names (dbtasks_task_live_claim_idx for
-- dbtasks_task_claim_idx), so that plans read as before.
DO $$
DECLARE
    i record;
BEGIN
    FOR i IN
        SELECT c.relname AS child, p.relname AS parent
        FROM pg_inherits h
        JOIN pg_class c ON c.oid = h.inhrelid
        JOIN pg_class p ON p.oid = h.inhparent
        JOIN pg_index x ON x.indexrelid = c.oid
        WHERE x.indrelid = 'dbtasks_task_live'::regclass
          AND c.relname <> regexp_replace(p.relname, '^dbtasks_task_', 'dbtasks_task_live_')
    LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', i.child,
            regexp_replace(i.parent, '^dbtasks_task_', 'dbtasks_task_live_'));
    END LOOP;
END $$;
-- See V14 and V29: small samples per column, and (queue, status) together, for the live rows the
-- claims are planned by (queues of very different sizes still share the live partition).
DO $$
DECLARE
    col record;
BEGIN
    FOR col IN
        SELECT attname FROM pg_attribute
        WHERE attrelid = 'dbtasks_task_live'::regclass AND attnum > 0 AND NOT attisdropped
    LOOP
        EXECUTE format('ALTER TABLE dbtasks_task_live ALTER COLUMN %I SET STATISTICS 10', col.attname);
    END LOOP;
END $$;
CREATE STATISTICS dbtasks_task_queue_status (mcv) ON queue, status FROM dbtasks_task_live;
ALTER STATISTICS dbtasks_task_queue_status SET STATISTICS 50;

CREATE TABLE dbtasks_attempt (
    LIKE dbtasks_attempt_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
    history_day INTEGER NOT NULL
) PARTITION BY RANGE (history_day);
ALTER TABLE dbtasks_attempt ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY;
SELECT setval(pg_get_serial_sequence('dbtasks_attempt', 'id'),
    COALESCE((SELECT max(id) FROM dbtasks_attempt_legacy), 0) + 1, false);
ALTER TABLE dbtasks_attempt ADD CONSTRAINT dbtasks_attempt_pkey PRIMARY KEY (id, history_day);
CREATE INDEX dbtasks_attempt_task_idx ON dbtasks_attempt (task_id, attempt);

-- 3. Idempotency keys, unique across live tasks and history.
CREATE TABLE dbtasks_task_key (
    idempotency_key VARCHAR(255) NOT NULL PRIMARY KEY
);
INSERT INTO dbtasks_task_key (idempotency_key)
    SELECT idempotency_key FROM dbtasks_task_legacy WHERE idempotency_key IS NOT NULL;

-- 4. Day partitions: created ahead by the engine, dropped by retention; both as the tables' owner,
-- so an engine connected as a role that only reads and writes rows can run them.
CREATE FUNCTION dbtasks_create_history_days(from_day INTEGER, to_day INTEGER) RETURNS INTEGER
    LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT
    AS $$
DECLARE
    d INTEGER;
    suffix TEXT;
    created INTEGER := 0;
BEGIN
    FOR d IN from_day .. to_day LOOP
        suffix := to_char(DATE '1970-01-01' + d, 'YYYYMMDD');
        IF to_regclass('dbtasks_task_p' || suffix) IS NULL THEN
            -- Made empty, then attached: ATTACH takes a lock that lets claims and settles go on.
            EXECUTE format('CREATE TABLE %I (LIKE dbtasks_task INCLUDING DEFAULTS INCLUDING CONSTRAINTS,'
                || ' CHECK (history_day >= %s AND history_day < %s))', 'dbtasks_task_p' || suffix, d, d + 1);
            EXECUTE format('ALTER TABLE dbtasks_task ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)',
                'dbtasks_task_p' || suffix, d, d + 1);
            created := created + 1;
        END IF;
        IF to_regclass('dbtasks_attempt_p' || suffix) IS NULL THEN
            EXECUTE format('CREATE TABLE %I (LIKE dbtasks_attempt INCLUDING DEFAULTS INCLUDING CONSTRAINTS,'
                || ' CHECK (history_day >= %s AND history_day < %s))', 'dbtasks_attempt_p' || suffix, d, d + 1);
            EXECUTE format('ALTER TABLE dbtasks_attempt ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)',
                'dbtasks_attempt_p' || suffix, d, d + 1);
        END IF;
    END LOOP;
    RETURN created;
END $$;

CREATE FUNCTION dbtasks_drop_history_day(day INTEGER) RETURNS BIGINT
    LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT
    AS $$
DECLARE
    tasks TEXT := CASE WHEN day < 0 THEN 'dbtasks_task_legacy'
        ELSE 'dbtasks_task_p' || to_char(DATE '1970-01-01' + day, 'YYYYMMDD') END;
    attempts TEXT := CASE WHEN day < 0 THEN 'dbtasks_attempt_legacy'
        ELSE 'dbtasks_attempt_p' || to_char(DATE '1970-01-01' + day, 'YYYYMMDD') END;
    keys BIGINT := 0;
BEGIN
    IF to_regclass(tasks) IS NOT NULL THEN
        EXECUTE format('DELETE FROM dbtasks_task_key k USING %I t'
            || ' WHERE t.idempotency_key IS NOT NULL AND k.idempotency_key = t.idempotency_key', tasks);
        GET DIAGNOSTICS keys = ROW_COUNT;
        EXECUTE format('DROP TABLE %I', tasks);
    END IF;
    IF to_regclass(attempts) IS NOT NULL THEN
        EXECUTE format('DROP TABLE %I', attempts);
    END IF;
    RETURN keys;
END $$;

SELECT dbtasks_create_history_days((floor(extract(epoch FROM clock_timestamp()) / 86400))::INTEGER - 1,
    (floor(extract(epoch FROM clock_timestamp()) / 86400))::INTEGER + 7);

-- 5. Live rows move; history stays where it is, as the partitions of day -1.
INSERT INTO dbtasks_task SELECT *, 0 FROM dbtasks_task_legacy WHERE status IN ('WAITING', 'PENDING', 'RUNNING');
DELETE FROM dbtasks_task_legacy WHERE status IN ('WAITING', 'PENDING', 'RUNNING');
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM dbtasks_task_legacy) THEN
        ALTER TABLE dbtasks_task_legacy ADD COLUMN history_day INTEGER NOT NULL DEFAULT -1;
        ALTER TABLE dbtasks_task_legacy ADD CONSTRAINT dbtasks_task_legacy_day CHECK (history_day = -1);
        DROP INDEX dbtasks_task_legacy_key_idx;
        DROP INDEX dbtasks_task_legacy_workflow_step_idx;
        ALTER TABLE dbtasks_task_legacy DROP CONSTRAINT dbtasks_task_legacy_pkey;
        ALTER TABLE dbtasks_task_legacy ADD CONSTRAINT dbtasks_task_legacy_pkey PRIMARY KEY (id, history_day);
        ALTER TABLE dbtasks_task ATTACH PARTITION dbtasks_task_legacy FOR VALUES FROM (-1) TO (0);
    ELSE
        DROP TABLE dbtasks_task_legacy;
    END IF;
    IF EXISTS (SELECT 1 FROM dbtasks_attempt_legacy) THEN
        ALTER TABLE dbtasks_attempt_legacy ADD COLUMN history_day INTEGER NOT NULL DEFAULT -1;
        ALTER TABLE dbtasks_attempt_legacy ADD CONSTRAINT dbtasks_attempt_legacy_day CHECK (history_day = -1);
        ALTER TABLE dbtasks_attempt_legacy ALTER COLUMN id DROP IDENTITY;
        ALTER TABLE dbtasks_attempt_legacy DROP CONSTRAINT dbtasks_attempt_legacy_pkey;
        ALTER TABLE dbtasks_attempt_legacy ADD CONSTRAINT dbtasks_attempt_legacy_pkey PRIMARY KEY (id, history_day);
        ALTER TABLE dbtasks_attempt ATTACH PARTITION dbtasks_attempt_legacy FOR VALUES FROM (-1) TO (0);
    ELSE
        DROP TABLE dbtasks_attempt_legacy;
    END IF;
END $$;

-- 6. Roles that read and wrote the old tables keep their privileges on the new ones.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT DISTINCT a.grantee, a.privilege_type
        FROM pg_class c
        CROSS JOIN LATERAL aclexplode(c.relacl) AS a
        WHERE c.oid = to_regclass('dbtasks_history_hour') AND a.grantee <> c.relowner
          AND a.privilege_type IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE')
    LOOP
        EXECUTE format('GRANT %s ON dbtasks_task, dbtasks_attempt, dbtasks_task_live, dbtasks_task_key TO %s',
            g.privilege_type,
            CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
    END LOOP;
END $$;
ANALYZE dbtasks_task_live;
