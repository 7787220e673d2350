-- What a claim in claim order of a queue with limits may take without counting the queue's RUNNING
-- tasks. Such a claim holds the queue's advisory lock exclusively and starts its batch only while
-- the queue has at most its smallest limit less the batch RUNNING (then no key can pass its limit).
-- Counting reads an entry of the rescue index for every task RUNNING in the database, in any queue,
-- so it grows with the whole database's work. Each of these claims leaves here, under that lock, an
-- upper bound of the queue's RUNNING tasks after it: the count it made (or the bound it trusted)
-- plus what it started. The next such claim trusts the bound instead of counting while
--   - it is within the claim's bound (else the claim counts, as the bound only grows),
--   - it is younger than an age limit the engine binds (by the database clock: counted_at), and
--   - no claim that starts tasks of limited keys under key locks ran since: each of those takes a
--     value of dbtasks_key_claim_seq while it holds the queue's lock shared, after the lock was
--     granted, and the bound keeps the value the sequence had when it was written (claimed_seq);
--     a claim that counts keys under the queue's exclusive lock deletes the bound.
-- A task leaving RUNNING only lowers the true count, so a trusted bound is never below it. A claim by
-- an engine that does not know the queue's limits yet takes no lock; the age limit bounds how long
-- a trusted bound can miss its starts.
CREATE TABLE dbtasks_queue_running (
    queue           VARCHAR(200) NOT NULL PRIMARY KEY,
    running_bound   BIGINT       NOT NULL,
    claimed_seq     BIGINT       NOT NULL,
    counted_at      TIMESTAMPTZ  NOT NULL
);

-- last_value moves with every nextval (is_called is true from here on), so a reader of last_value
-- sees each one, committed or not: with CACHE 1 each nextval writes the sequence's one row, which a
-- cache of values per session would skip. One sequence serves every queue, so a claim that locks
-- keys in any queue makes the next claim within the bound of every queue count.
CREATE SEQUENCE dbtasks_key_claim_seq CACHE 1 NO CYCLE;
SELECT setval('dbtasks_key_claim_seq', 1, true);

-- Roles that hold privileges on dbtasks_task get the same on the new table, and those that may
-- update tasks (claim them) may read and advance the sequence and read and write the table.
SELECT dbtasks_grant_like_task('dbtasks_queue_running', 'dbtasks_key_claim_seq', 'dbtasks_queue_running');
