-- Queue names, kinds and idempotency keys compare as exact strings, as on PostgreSQL and H2.
-- Created without a collation, these columns took the server default (typically
-- utf8mb4_general_ci), which ignores case, accents and trailing spaces: 'Invoice-A' and
-- 'invoice-a' collided as one idempotency key, so the second enqueue silently got the first
-- task back as its "duplicate", and a worker of queue 'mail' claimed tasks of queue 'Mail'.
-- utf8mb4_nopad_bin compares code points and does not pad. Converting the tables first makes
-- every text column utf8mb4 whatever the server's default character set, so payloads, names and
-- error messages keep every character.
ALTER TABLE dbtasks_task CONVERT TO CHARACTER SET utf8mb4;
ALTER TABLE dbtasks_task
    MODIFY queue           VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    MODIFY kind            VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    MODIFY idempotency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;

ALTER TABLE dbtasks_attempt CONVERT TO CHARACTER SET utf8mb4;
ALTER TABLE dbtasks_attempt
    MODIFY queue VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL;
