-- A batch's rows leave together: retention's row-by-row passes skip the tasks that are chunks of a
-- batch (NOT EXISTS on task_id), and a day of history holding one is kept until the batch goes
-- whole. Both look chunk rows up by task id, which the primary key (batch_id, chunk) does not lead.
CREATE INDEX dbtasks_batch_chunk_task_idx ON dbtasks_batch_chunk (task_id);
