-- Times are DATETIME(6) in UTC (UTC_TIMESTAMP(6)), whatever the session time zone.
-- Run-once guards: one row per key; the primary key is the guarantee.
CREATE TABLE dbtasks_once (
    once_key          VARCHAR(255) NOT NULL,
    status            VARCHAR(16)  NOT NULL,
    token             BIGINT       NOT NULL,
    owner             VARCHAR(200) NOT NULL,
    lease_expires_at  DATETIME(6),
    runs              INT          NOT NULL,
    started_at        DATETIME(6) NOT NULL,
    finished_at       DATETIME(6),
    duration_ms       BIGINT,
    last_error        MEDIUMTEXT,
    created_at        DATETIME(6) NOT NULL,
    updated_at        DATETIME(6) NOT NULL,
    CONSTRAINT dbtasks_once_pk PRIMARY KEY (once_key),
    CONSTRAINT dbtasks_once_status_check CHECK (status IN ('RUNNING', 'SUCCEEDED', 'FAILED'))
) ENGINE = InnoDB;
-- Retention: rows by last change.
CREATE INDEX dbtasks_once_updated_idx ON dbtasks_once (updated_at);

-- Inbox: one row per received (consumer, message id).
CREATE TABLE dbtasks_inbox (
    consumer     VARCHAR(200) NOT NULL,
    message_id   VARCHAR(255) NOT NULL,
    received_at  DATETIME(6) NOT NULL,
    CONSTRAINT dbtasks_inbox_pk PRIMARY KEY (consumer, message_id)
) ENGINE = InnoDB;
-- Retention: records by age.
CREATE INDEX dbtasks_inbox_received_idx ON dbtasks_inbox (received_at);

-- Lease locks: one row per name, kept after release so it always holds the name's last token.
CREATE TABLE dbtasks_lock (
    name         VARCHAR(200) NOT NULL,
    token        BIGINT       NOT NULL,
    owner        VARCHAR(200) NOT NULL,
    acquired_at  DATETIME(6) NOT NULL,
    expires_at   DATETIME(6) NOT NULL,
    CONSTRAINT dbtasks_lock_pk PRIMARY KEY (name)
) ENGINE = InnoDB;
