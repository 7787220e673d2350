-- A queue table churns: every claim and completion leaves a dead row version and a dead entry at the
-- head of the claim index, which each later claim steps over until vacuum removes it. With the
-- default scale factor (20% of the table) a large backlog waits for hundreds of thousands of dead
-- rows before vacuum starts, and claims slow down steadily. Vacuum this table after a fixed number
-- of dead rows instead, and without cost-based throttling.
ALTER TABLE dbtasks_task SET (
    autovacuum_vacuum_scale_factor = 0.0,
    autovacuum_vacuum_threshold = 10000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_analyze_scale_factor = 0.02
);
