-- The idempotency key's unique index covers keyed tasks only.
--
-- A claim and a completion each change status, so neither update is HOT: each adds an entry to
-- every index whose predicate the new row version meets. The whole-column unique constraint
-- indexed the NULL key of every keyless task, so it took an entry at the insert, the claim and the
-- completion of every task. Measured on a no-op burn-down of 100k tasks (the bench's burndown
-- scenario, one VM): 33,195-35,229 / 47,944-49,313 / 49,368-50,137 tasks/s at W = 8 / 32 / 64 in
-- three runs with the whole constraint, 36,434-40,064 / 49,506-52,225 / 55,219-56,289 in two with
-- this index.
--
-- Upgrading: instances built before this migration enqueue keyed tasks with ON CONFLICT
-- (idempotency_key), which a partial index does not match, so once this has run their keyed
-- enqueues fail (42P10). Upgrade every instance first with migrate(false) (its enqueues name the
-- predicate and match both indexes), then migrate; or stop the old instances before migrating.
-- Building the index locks the task table against writes while it runs; on a large table, create
-- it CONCURRENTLY beforehand under this name, and this migration then only drops the constraint.
CREATE UNIQUE INDEX IF NOT EXISTS dbtasks_task_key_idx ON dbtasks_task (idempotency_key)
    WHERE idempotency_key IS NOT NULL;
ALTER TABLE dbtasks_task DROP CONSTRAINT dbtasks_task_key_unique;
