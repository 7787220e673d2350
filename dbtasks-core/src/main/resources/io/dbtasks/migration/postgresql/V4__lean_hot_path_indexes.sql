-- Indexes that the claim-and-complete path does not pay for.
--
-- Every claim and every completion changes status, an indexed column, so PostgreSQL cannot make
-- the update HOT: it adds a new entry to every index of the table whose predicate the new row
-- version meets, WAL-logged. Measured on a burn-down, dropping the two indexes below and making the
-- key index partial took the WAL records per task from about 15 to about 10; the key index then
-- stayed whole, for the reason below.

-- The idempotency key keeps its full unique constraint, although a partial one (keys only) would
-- save an entry per update: instances not yet upgraded enqueue with ON CONFLICT (idempotency_key),
-- which a partial index does not match, so a rolling upgrade would break their keyed enqueues.

-- Listing by status: PENDING is served by the claim index, RUNNING by the rescue index, SUCCEEDED
-- (the bulk of the table) by the primary key in id order; only the rare end states need their own,
-- and a task enters it once, when it ends there.
DROP INDEX dbtasks_task_status_idx;
CREATE INDEX dbtasks_task_unsuccessful_idx ON dbtasks_task (id) WHERE status IN ('FAILED', 'CANCELLED');

-- Attempt counts by outcome are an aggregate over the whole table; an index on outcome only made
-- every attempt row cost one more index entry.
DROP INDEX dbtasks_attempt_outcome_idx;
