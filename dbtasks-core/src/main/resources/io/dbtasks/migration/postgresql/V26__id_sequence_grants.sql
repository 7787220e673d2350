-- Migration V25 turned the id columns of tasks, workflows, batches and job definitions from
-- identities into defaults drawn from new sequences. An identity's sequence needs no privilege of
-- its own (INSERT on the table is enough), a default's nextval needs USAGE on the sequence, and the
-- new sequences carry no grant (the dropped identity sequences took theirs with them): an
-- application user that is not the owner and enqueued before the upgrade would fail every enqueue
-- after it with "permission denied for sequence". Every role (or PUBLIC) that may insert into one
-- of these tables is given USAGE on its id sequence, so what inserted before inserts after.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT DISTINCT s.seq, a.grantee
        FROM (VALUES ('dbtasks_task', 'dbtasks_task_id_seq'),
                     ('dbtasks_workflow', 'dbtasks_workflow_id_seq'),
                     ('dbtasks_batch', 'dbtasks_batch_id_seq'),
                     ('dbtasks_job', 'dbtasks_job_id_seq')) AS s(tab, seq)
        JOIN pg_class c ON c.oid = to_regclass(s.tab)
        CROSS JOIN LATERAL aclexplode(c.relacl) AS a
        WHERE a.privilege_type = 'INSERT' AND a.grantee <> c.relowner
    LOOP
        EXECUTE format('GRANT USAGE ON SEQUENCE %s TO %s', to_regclass(g.seq),
            CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
    END LOOP;
END $$;
