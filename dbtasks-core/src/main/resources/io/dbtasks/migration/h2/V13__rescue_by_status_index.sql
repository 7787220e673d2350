-- H2 updates a row by removing it from every index of its table and adding it back, whether or not
-- the index's columns changed (org.h2.table.Table#updateRows, H2 2.x), so each index of
-- dbtasks_task costs every claim and every completion an entry removed and one added. The rescue
-- index (status, lease_expires_at) is one of them; the finished index (status, finished_at) serves
-- the rescue's status = 'RUNNING' prefix as well, and RUNNING rows are few (at most the claimed
-- tasks of all engines), so the rescue sorts them by lease_expires_at itself.
DROP INDEX IF EXISTS dbtasks_task_rescue_idx;
