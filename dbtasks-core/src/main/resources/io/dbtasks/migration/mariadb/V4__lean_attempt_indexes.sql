-- Attempt counts by outcome are an aggregate over the whole table; an index on outcome only made
-- every attempt row (one per task run) cost one more index entry.
DROP INDEX dbtasks_attempt_outcome_idx ON dbtasks_attempt;
