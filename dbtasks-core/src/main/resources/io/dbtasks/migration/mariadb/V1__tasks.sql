-- Times are DATETIME(6) in UTC (UTC_TIMESTAMP(6)), whatever the session time zone.
-- Fencing tokens: strictly increasing across every claim of every task.
CREATE SEQUENCE dbtasks_token_seq;

CREATE TABLE dbtasks_task (
    id                  BIGINT AUTO_INCREMENT PRIMARY KEY,
    queue               VARCHAR(200)     NOT NULL,
    kind                VARCHAR(200)     NOT NULL,
    idempotency_key     VARCHAR(255),
    name                VARCHAR(200),
    reference           VARCHAR(200),
    payload             LONGTEXT,
    status              VARCHAR(16)      NOT NULL,
    priority            INT              NOT NULL DEFAULT 0,
    attempt             INT              NOT NULL DEFAULT 0,
    max_attempts        INT              NOT NULL,
    backoff             VARCHAR(16)      NOT NULL,
    backoff_initial_ms  BIGINT           NOT NULL,
    backoff_max_ms      BIGINT           NOT NULL,
    backoff_multiplier  DOUBLE NOT NULL,
    backoff_jitter      DOUBLE NOT NULL,
    timeout_ms          BIGINT,
    run_at              DATETIME(6)      NOT NULL,
    lease_owner         VARCHAR(200),
    lease_token         BIGINT,
    lease_expires_at    DATETIME(6),
    heartbeat_at        DATETIME(6),
    cancel_requested    BOOLEAN          NOT NULL DEFAULT FALSE,
    created_at          DATETIME(6)      NOT NULL,
    updated_at          DATETIME(6)      NOT NULL,
    started_at          DATETIME(6),
    finished_at         DATETIME(6),
    last_error          MEDIUMTEXT,
    CONSTRAINT dbtasks_task_status_check
        CHECK (status IN ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
    CONSTRAINT dbtasks_task_backoff_check CHECK (backoff IN ('FIXED', 'EXPONENTIAL')),
    CONSTRAINT dbtasks_task_attempts_check CHECK (max_attempts >= 1 AND attempt >= 0),
    CONSTRAINT dbtasks_task_key_unique UNIQUE (idempotency_key)
) ENGINE = InnoDB;

-- Claim: due PENDING tasks of a queue in priority order (DESC is honoured from MariaDB 10.8).
CREATE INDEX dbtasks_task_claim_idx ON dbtasks_task (queue, status, priority DESC, run_at, id);
-- Rescue: RUNNING tasks by lease expiry.
CREATE INDEX dbtasks_task_rescue_idx ON dbtasks_task (status, lease_expires_at);
-- Listing and counting by status.
CREATE INDEX dbtasks_task_status_idx ON dbtasks_task (status, queue);

CREATE TABLE dbtasks_attempt (
    id             BIGINT AUTO_INCREMENT PRIMARY KEY,
    task_id        BIGINT       NOT NULL,
    attempt        INT          NOT NULL,
    queue          VARCHAR(200) NOT NULL,
    worker         VARCHAR(200) NOT NULL,
    lease_token    BIGINT       NOT NULL,
    started_at     DATETIME(6)  NOT NULL,
    finished_at    DATETIME(6)  NOT NULL,
    duration_ms    BIGINT       NOT NULL,
    outcome        VARCHAR(16)  NOT NULL,
    error_class    VARCHAR(500),
    error_message  MEDIUMTEXT,
    stack_trace    MEDIUMTEXT,
    CONSTRAINT dbtasks_attempt_outcome_check
        CHECK (outcome IN ('SUCCEEDED', 'FAILED', 'TIMED_OUT', 'LEASE_EXPIRED', 'CANCELLED'))
) ENGINE = InnoDB;
CREATE INDEX dbtasks_attempt_task_idx ON dbtasks_attempt (task_id, attempt);
CREATE INDEX dbtasks_attempt_outcome_idx ON dbtasks_attempt (outcome, queue);
