-- Indexes that the claim-and-complete path does not pay for, as PostgreSQL's V4 and MariaDB's V4
-- dropped them. Every claim and every completion changes status, so each index that starts with
-- status gets an entry removed and one added per transition, and each attempt row one entry per
-- index of the attempt table.

-- Listing and counting by status: PENDING is served by the claim index (queue, status, ...), every
-- status by the finished index (status, finished_at) and the rescue index (status, lease_expires_at).
DROP INDEX dbtasks_task_status_idx;

-- Attempt counts by outcome are an aggregate over the whole table.
DROP INDEX dbtasks_attempt_outcome_idx;
