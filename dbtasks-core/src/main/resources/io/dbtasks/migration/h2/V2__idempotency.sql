-- Run-once guards: one row per key; the primary key is the guarantee.
CREATE TABLE dbtasks_once (
    once_key          VARCHAR(255) NOT NULL,
    status            VARCHAR(16)  NOT NULL,
    token             BIGINT       NOT NULL,
    owner             VARCHAR(200) NOT NULL,
    lease_expires_at  TIMESTAMP(6) WITH TIME ZONE,
    runs              INT          NOT NULL,
    started_at        TIMESTAMP(6) WITH TIME ZONE  NOT NULL,
    finished_at       TIMESTAMP(6) WITH TIME ZONE,
    duration_ms       BIGINT,
    last_error        CHARACTER LARGE OBJECT,
    created_at        TIMESTAMP(6) WITH TIME ZONE  NOT NULL,
    updated_at        TIMESTAMP(6) WITH TIME ZONE  NOT NULL,
    CONSTRAINT dbtasks_once_pk PRIMARY KEY (once_key),
    CONSTRAINT dbtasks_once_status_check CHECK (status IN ('RUNNING', 'SUCCEEDED', 'FAILED'))
);
-- Retention: rows by last change.
CREATE INDEX dbtasks_once_updated_idx ON dbtasks_once (updated_at);

-- Inbox: one row per received (consumer, message id).
CREATE TABLE dbtasks_inbox (
    consumer     VARCHAR(200) NOT NULL,
    message_id   VARCHAR(255) NOT NULL,
    received_at  TIMESTAMP(6) WITH TIME ZONE  NOT NULL,
    CONSTRAINT dbtasks_inbox_pk PRIMARY KEY (consumer, message_id)
);
-- Retention: records by age.
CREATE INDEX dbtasks_inbox_received_idx ON dbtasks_inbox (received_at);

-- Lease locks: one row per name, kept after release so it always holds the name's last token.
CREATE TABLE dbtasks_lock (
    name         VARCHAR(200) NOT NULL,
    token        BIGINT       NOT NULL,
    owner        VARCHAR(200) NOT NULL,
    acquired_at  TIMESTAMP(6) WITH TIME ZONE  NOT NULL,
    expires_at   TIMESTAMP(6) WITH TIME ZONE  NOT NULL,
    CONSTRAINT dbtasks_lock_pk PRIMARY KEY (name)
);
