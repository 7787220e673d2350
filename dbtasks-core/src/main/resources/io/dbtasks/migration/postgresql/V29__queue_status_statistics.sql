-- The planner's statistics of queue and status together.
--
-- A claim reads the first due PENDING tasks of one queue. Column by column, a queue holding a
-- backlog and the PENDING state may each be a small share of a table that is mostly history (2 %
-- and 2 %, say), and taken as independent conditions they leave a share fifty times too small
-- (0.04 %). For so few rows the planner prefers a bitmap scan of the queue's PENDING rows and a sort
-- to the claim index's order: beside ten million finished tasks and a backlog of 200,000, that read
-- and sorted the whole backlog on every claim (a sort spilled to disk, 189 ms per claim instead of
-- 0.1 ms, the burn-down at a tenth of its speed with empty history). The most common (queue,
-- status) pairs, kept by ANALYZE, give it the backlog's size.
--
-- The statistics target is the columns' own (V14), so the sample stays as small as V14 made it.
CREATE STATISTICS dbtasks_task_queue_status (mcv) ON queue, status FROM dbtasks_task;
ANALYZE dbtasks_task;
