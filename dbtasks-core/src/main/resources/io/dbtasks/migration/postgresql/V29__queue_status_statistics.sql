-- The planner's statistics of queue and status together.
--
-- A claim reads the first due PENDING tasks of one queue. Column by column, a queue holding a
-- backlog and the PENDING state may each be a small share of a table that is mostly history (2 %
-- and 2 %, say), and taken as independent conditions they leave a share fifty times too small
-- (0.04 %). For so few rows the planner prefers a bitmap scan of the queue's PENDING rows and a sort
-- to the claim index's order: beside ten million finished tasks and a backlog of 200,000, that read
-- and sorted the whole backlog on every claim planned with the queue's value (a sort spilled to
-- disk, 189 ms per claim instead of 0.1 ms). The most common (queue, status) pairs, kept by
-- ANALYZE, give it the backlog's size.
--
-- Target 50: the list holds the 50 most common pairs. At the columns' own target (10, V14) a
-- backlog that shrinks while it is burned down falls out of a ten-pair list behind the history
-- pairs (four queues of history and one backlog already make thirteen), and every claim planned
-- after the next ANALYZE sorted again: the burn-down beside ten million finished tasks ran at 0.24
-- of its speed with empty history, at 1.00 with this target. The sample grows from 3,000 to 15,000
-- rows (ANALYZE of the ten-million-row table: 42 ms).
CREATE STATISTICS dbtasks_task_queue_status (mcv) ON queue, status FROM dbtasks_task;
ALTER STATISTICS dbtasks_task_queue_status SET STATISTICS 50;
ANALYZE dbtasks_task;
