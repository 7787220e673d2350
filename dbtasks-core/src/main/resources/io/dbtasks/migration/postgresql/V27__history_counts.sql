-- Counts of finished tasks per hour of finished_at, kept by the engine's maintenance so the
-- overview (stateCounts) never scans history. An hour is counted once it has closed; its marker
-- row in dbtasks_history_hour (counted_at set) says so. A marker with counted_at NULL is an hour
-- not yet counted: an operator action that sends a finished task back or deletes it creates and
-- locks its hour's marker, so it and the rollup of that hour happen one after the other and the
-- action subtracts from the counts exactly when the hour was counted before it. Each of them writes
-- the marker (changes + 1, or counted_at), so that on a Galera cluster two of them on different
-- nodes conflict at certification as they wait for each other on one node.
CREATE TABLE dbtasks_history_hour (
    hour_start  TIMESTAMPTZ NOT NULL PRIMARY KEY,
    counted_at  TIMESTAMPTZ,
    changes     BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE dbtasks_history_count (
    hour_start  TIMESTAMPTZ  NOT NULL,
    queue       VARCHAR(200) NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    n           BIGINT       NOT NULL,
    PRIMARY KEY (hour_start, queue, status)
);

-- Roles that read or change tasks without owning the table (an application user next to the one
-- that migrates) read and change the counts the same way: each gets on the new tables the
-- privileges it holds on dbtasks_task.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT DISTINCT a.grantee, a.privilege_type
        FROM pg_class c
        CROSS JOIN LATERAL aclexplode(c.relacl) AS a
        WHERE c.oid = to_regclass('dbtasks_task') AND a.grantee <> c.relowner
          AND a.privilege_type IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE')
    LOOP
        EXECUTE format('GRANT %s ON dbtasks_history_hour, dbtasks_history_count TO %s', g.privilege_type,
            CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
    END LOOP;
END $$;
