-- The index by concurrency key covers finished tasks only: each day partition (and the legacy
-- partition of day -1) gets (concurrency_key, status, id) of its own, and the live partition none.
--
-- A keyed task entered the partitioned index dbtasks_task_concurrency_key_idx three times: at its
-- enqueue and again at its claim (a claim updates status, so the row gets a new version in every
-- index of the live partition), both in the live partition, and once more in its day's partition
-- when it finished. The live reads by key have other indexes: PENDING tasks of a queue and key are
-- in the per-key claim index, (queue, concurrency_key, priority, run_at, id), and RUNNING tasks, a
-- few thousand at most, in the rescue index. An index of the partitioned table cannot leave one
-- partition out, and PostgreSQL uses a partial index only for a query that states its condition, so
-- the index is defined per partition instead: the planner uses a partition's own index for a query
-- on the partitioned table, such as a search by key over the whole history, with no condition
-- stated. dbtasks_create_history_days creates it with each new day's partition, and on each day
-- in its range that lacks it.
--
-- The upgrade builds the index again over every finished keyed task (rows without a key are not
-- in it), one partition at a time, oldest first, before it drops the old index: each build holds
-- its partition against writes until the migration commits, so settles wait from the build of
-- today's partition on, and claims and enqueues only for the drop at the end, which locks every
-- partition. A partition whose index of the old one bears the new name (the legacy partition's)
-- has it renamed first; the drop removes it.
DO $$
DECLARE
    p record;
    idx TEXT;
BEGIN
    FOR p IN
        SELECT c.relname
        FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
        WHERE h.inhparent = 'dbtasks_task'::regclass AND c.relname <> 'dbtasks_task_live'
        ORDER BY c.relname
    LOOP
        idx := p.relname || '_concurrency_key_idx';
        IF to_regclass(idx) IS NOT NULL THEN
            EXECUTE format('ALTER INDEX %I RENAME TO %I', idx, p.relname || '_concurrency_key_old');
        END IF;
        EXECUTE format('CREATE INDEX %I ON %I (concurrency_key, status, id) WHERE concurrency_key IS NOT NULL',
            idx, p.relname);
    END LOOP;
END $$;

DROP INDEX dbtasks_task_concurrency_key_idx;

CREATE OR REPLACE FUNCTION dbtasks_create_history_days(from_day INTEGER, to_day INTEGER) RETURNS INTEGER
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
            -- Made empty, indexed, then attached: ATTACH takes a lock that lets claims and settles go on.
            EXECUTE format('CREATE TABLE %I (LIKE dbtasks_task INCLUDING DEFAULTS INCLUDING CONSTRAINTS,'
                || ' CHECK (history_day >= %s AND history_day < %s))', 'dbtasks_task_p' || suffix, d, d + 1);
            EXECUTE format('CREATE INDEX %I ON %I (concurrency_key, status, id) WHERE concurrency_key IS NOT NULL',
                'dbtasks_task_p' || suffix || '_concurrency_key_idx', 'dbtasks_task_p' || suffix);
            EXECUTE format('ALTER TABLE dbtasks_task ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)',
                'dbtasks_task_p' || suffix, d, d + 1);
            created := created + 1;
        ELSIF to_regclass('dbtasks_task_p' || suffix || '_concurrency_key_idx') IS NULL THEN
            -- A day made by an engine that ran this function as it was before V33, while V33 ran.
            EXECUTE format('CREATE INDEX %I ON %I (concurrency_key, status, id) WHERE concurrency_key IS NOT NULL',
                'dbtasks_task_p' || suffix || '_concurrency_key_idx', 'dbtasks_task_p' || suffix);
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
