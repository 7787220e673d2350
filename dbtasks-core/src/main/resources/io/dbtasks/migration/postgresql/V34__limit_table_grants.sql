-- Roles that claim tasks without owning the tables (an application user next to the one that
-- migrates) need the tables of limits and fairness too: every claim reads the queues' limits, fair
-- queues and queue-wide rates first, and fails if it cannot, rather than claim as if a queue had
-- none. The migrations that added dbtasks_fair_queue (V21) and dbtasks_queue_rate (V28) gave no
-- privileges on them, so such a role granted its privileges before them failed every claim after
-- the upgrade, in every queue.
--
-- dbtasks_grant_like_task gives each role (or PUBLIC) that holds privileges on dbtasks_task the same
-- on the tables named, as V27 and V30 did for the tables they added; and to those that may update
-- tasks (claim them) USAGE and SELECT on the sequences named and every privilege a claim needs on the
-- claim tables named, which claims write whatever else the role may do. Later migrations call it for
-- theirs.
CREATE FUNCTION dbtasks_grant_like_task(tables TEXT, sequences TEXT DEFAULT NULL, claim_tables TEXT DEFAULT NULL)
    RETURNS VOID
    LANGUAGE plpgsql
    AS $$
DECLARE
    g record;
    role_name TEXT;
BEGIN
    FOR g IN
        SELECT DISTINCT a.grantee AS oid, a.privilege_type
        FROM pg_class c
        CROSS JOIN LATERAL aclexplode(c.relacl) AS a
        WHERE c.oid = to_regclass('dbtasks_task') AND a.grantee <> c.relowner
          AND a.privilege_type IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE')
    LOOP
        role_name := CASE WHEN g.oid = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.oid)) END;
        EXECUTE format('GRANT %s ON %s TO %s', g.privilege_type, tables, role_name);
        IF sequences IS NOT NULL AND g.privilege_type = 'UPDATE' THEN
            EXECUTE format('GRANT USAGE, SELECT ON SEQUENCE %s TO %s', sequences, role_name);
        END IF;
        IF claim_tables IS NOT NULL AND g.privilege_type = 'UPDATE' THEN
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO %s', claim_tables, role_name);
        END IF;
    END LOOP;
END $$;
REVOKE EXECUTE ON FUNCTION dbtasks_grant_like_task(TEXT, TEXT, TEXT) FROM PUBLIC;

-- Claims of rate-limited keys log their starts in dbtasks_rate_start and delete the expired ones.
SELECT dbtasks_grant_like_task(
    'dbtasks_limit, dbtasks_concurrency_key, dbtasks_rate_start, dbtasks_fair_queue, dbtasks_queue_rate',
    NULL, 'dbtasks_rate_start');
