-- Run-once keys, inbox consumers and message ids, and lock names compare as exact strings, as on
-- PostgreSQL and H2 (see V2_1 for the task table). Under the server's default collation
-- (typically utf8mb4_general_ci) 'Report' and 'report', or message ids that differ only in case,
-- accent or trailing spaces, would be one key: the second would be skipped as a duplicate.
ALTER TABLE dbtasks_once CONVERT TO CHARACTER SET utf8mb4;
ALTER TABLE dbtasks_once
    MODIFY once_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL;

ALTER TABLE dbtasks_inbox CONVERT TO CHARACTER SET utf8mb4;
ALTER TABLE dbtasks_inbox
    MODIFY consumer   VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    MODIFY message_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL;

ALTER TABLE dbtasks_lock CONVERT TO CHARACTER SET utf8mb4;
ALTER TABLE dbtasks_lock
    MODIFY name VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL;
