-- Run-once rescue: a guard row may name the registered target that re-runs its key, so that an
-- engine can run a key again after its runner died (a RUNNING row past its lease) without waiting
-- for a caller that may never come back, such as a scheduled method's per-slot key.
ALTER TABLE dbtasks_once ADD COLUMN target VARCHAR(200);
-- The rescue pass: RUNNING rows whose lease has ended.
CREATE INDEX dbtasks_once_rescue_idx ON dbtasks_once (status, lease_expires_at);

-- Schedules declared in code that no running engine declares (their code was removed) are held:
-- paused with the reason NO_CODE and their next slot kept, and resumed by an engine that declares
-- them again. NULL for a schedule running, or paused by an operator.
ALTER TABLE dbtasks_schedule ADD COLUMN paused_reason VARCHAR(32);
