-- Roles that claim tasks without owning the tables (an application user next to the one that
-- migrates) need the tables of limits and fairness too: every claim reads the queues' limits, fair
-- queues and queue-wide rates first, and fails if it cannot, rather than claim as if a queue had
-- none. The migrations that added dbtasks_fair_queue (V21) and dbtasks_queue_rate (V28) gave no
-- privileges on them, so such a role granted its privileges before them failed every claim after
-- the upgrade, in every queue. Each role (or PUBLIC) gets on these tables the privileges it holds
-- on dbtasks_task, as V27 and V30 do for the tables they add.
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
        EXECUTE format('GRANT %s ON dbtasks_limit, dbtasks_concurrency_key, dbtasks_rate_start,'
            ' dbtasks_fair_queue, dbtasks_queue_rate TO %s', g.privilege_type,
            CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
    END LOOP;
END $$;
