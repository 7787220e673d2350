-- Times are DATETIME(6) in UTC (UTC_TIMESTAMP(6)), whatever the session time zone. Codes, business
-- types, kinds and keys compare as exact strings (utf8mb4_nopad_bin), as on PostgreSQL and H2.
-- Job definitions (seed 003's task_job): a target method with JSON arguments, run by code, by
-- business type or in batch; each run is a task of kind dbtasks.job. Running locks the row, so
-- concurrent runs of one definition enqueue one task.
CREATE TABLE dbtasks_job (
    id                  BIGINT AUTO_INCREMENT PRIMARY KEY,
    code                VARCHAR(200) COLLATE utf8mb4_nopad_bin NOT NULL,
    name                VARCHAR(200)     NOT NULL,
    description         MEDIUMTEXT,
    business_type       VARCHAR(200) COLLATE utf8mb4_nopad_bin NOT NULL,
    business_id         VARCHAR(200),
    bean_name           VARCHAR(200)     NOT NULL,
    method_name         VARCHAR(200)     NOT NULL,
    parameter_types     MEDIUMTEXT NOT NULL,
    arguments           MEDIUMTEXT NOT NULL,
    queue               VARCHAR(200) COLLATE utf8mb4_nopad_bin,
    max_attempts        INT              NOT NULL,
    backoff             VARCHAR(16)      NOT NULL,
    backoff_initial_ms  BIGINT           NOT NULL,
    backoff_max_ms      BIGINT           NOT NULL,
    backoff_multiplier  DOUBLE PRECISION NOT NULL,
    backoff_jitter      DOUBLE PRECISION NOT NULL,
    cron                VARCHAR(200),
    time_zone           VARCHAR(64),
    enabled             BOOLEAN NOT NULL,
    runs                BIGINT           NOT NULL DEFAULT 0,
    last_task_id        BIGINT,
    created_at          DATETIME(6) NOT NULL,
    updated_at          DATETIME(6) NOT NULL,
    CONSTRAINT dbtasks_job_code_unique UNIQUE (code),
    CONSTRAINT dbtasks_job_backoff_check CHECK (backoff IN ('FIXED', 'EXPONENTIAL')),
    CONSTRAINT dbtasks_job_attempts_check CHECK (max_attempts >= 1)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
-- Run by business type: keyset pages in id order.
CREATE INDEX dbtasks_job_type_idx ON dbtasks_job (business_type, id);
-- Re-run failures: definitions by their last task.
CREATE INDEX dbtasks_job_last_task_idx ON dbtasks_job (last_task_id);

-- One row per run: which task ran which definition, for which business type and id.
CREATE TABLE dbtasks_job_run (
    task_id        BIGINT       NOT NULL,
    job_code       VARCHAR(200) COLLATE utf8mb4_nopad_bin NOT NULL,
    run_no         BIGINT       NOT NULL,
    business_type  VARCHAR(200) COLLATE utf8mb4_nopad_bin NOT NULL,
    business_id    VARCHAR(200),
    created_at     DATETIME(6) NOT NULL,
    CONSTRAINT dbtasks_job_run_pk PRIMARY KEY (task_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
CREATE INDEX dbtasks_job_run_code_idx ON dbtasks_job_run (job_code, run_no);
CREATE INDEX dbtasks_job_run_type_idx ON dbtasks_job_run (business_type, task_id);

-- Chunked batches: one row per batch, one per chunk. A chunk is done when its row's done_at is
-- set, in the same transaction as the chunk's effects and its task's guarded completion.
CREATE TABLE dbtasks_batch (
    id               BIGINT AUTO_INCREMENT PRIMARY KEY,
    kind             VARCHAR(200) COLLATE utf8mb4_nopad_bin NOT NULL,
    name             VARCHAR(200),
    idempotency_key  VARCHAR(255) COLLATE utf8mb4_nopad_bin,
    chunks           INT          NOT NULL,
    params           MEDIUMTEXT,
    created_at       DATETIME(6) NOT NULL,
    CONSTRAINT dbtasks_batch_key_unique UNIQUE (idempotency_key),
    CONSTRAINT dbtasks_batch_chunks_check CHECK (chunks >= 1)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE dbtasks_batch_chunk (
    batch_id    BIGINT NOT NULL,
    chunk       INT    NOT NULL,
    task_id     BIGINT NOT NULL,
    done_at     DATETIME(6),
    done_token  BIGINT,
    CONSTRAINT dbtasks_batch_chunk_pk PRIMARY KEY (batch_id, chunk)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
