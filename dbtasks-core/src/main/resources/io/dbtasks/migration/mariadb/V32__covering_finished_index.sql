-- The finished index carries the queue: (status, finished_at, queue) in place of (status,
-- finished_at), under the same name. The overview counts, per queue, the tasks finished since the
-- newest counted hour, and the hourly count counts a closed hour per queue: one range of this index
-- per finished state, now read alone ("Using index"), where each entry found used to cost a read of
-- its row through the primary key for the queue (and for the overview's SUCCEEDED branch the
-- optimizer of MariaDB 10.11 took (status, queue) instead, reading every SUCCEEDED row of the
-- current day). Every other query on (status, finished_at) keeps its plan: the leading columns and their order are the same. A finished row
-- still enters one index, with the queue's bytes more.
--
-- PostgreSQL keeps its partial (status, finished_at): an index-only scan there needs pages that
-- VACUUM has marked all-visible, which the rows of the hour not yet counted are not, so the count
-- would still read them.
--
-- One ALTER, built in place (ALGORITHM=INPLACE, LOCK=NONE): it reads every partition once while
-- claims and settles go on.
ALTER TABLE dbtasks_task
    DROP INDEX dbtasks_task_finished_idx,
    ADD INDEX dbtasks_task_finished_idx (status, finished_at, queue),
    ALGORITHM = INPLACE, LOCK = NONE;
