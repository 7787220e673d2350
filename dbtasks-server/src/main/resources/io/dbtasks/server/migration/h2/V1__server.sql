-- Tables of dbtasks-server (not of the library): its own Flyway history, dbtasks_server_schema_history.
-- Times are epoch milliseconds (UTC), so they read the same on every database and time zone.

-- Users the server created itself: the admin generated at the first start (password as a bcrypt hash).
CREATE TABLE dbtasks_server_user (
    name           VARCHAR(100) NOT NULL,
    password_hash  VARCHAR(200) NOT NULL,
    roles          VARCHAR(200) NOT NULL,
    created_at     BIGINT       NOT NULL,
    CONSTRAINT dbtasks_server_user_pk PRIMARY KEY (name)
);

-- Idempotency-Key header records: one per (client, key); the primary key is the atomic claim.
CREATE TABLE dbtasks_server_idempotency (
    client         VARCHAR(200) NOT NULL,
    idem_key       VARCHAR(255) NOT NULL,
    request_hash   VARCHAR(64)  NOT NULL,
    state          VARCHAR(16)  NOT NULL,
    status         INT,
    content_type   VARCHAR(200),
    location       VARCHAR(1000),
    response_body  CHARACTER LARGE OBJECT,
    created_at     BIGINT       NOT NULL,
    expires_at     BIGINT       NOT NULL,
    CONSTRAINT dbtasks_server_idempotency_pk PRIMARY KEY (client, idem_key),
    CONSTRAINT dbtasks_server_idempotency_state_check CHECK (state IN ('IN_FLIGHT', 'DONE'))
);
-- Expiry sweeps by age.
CREATE INDEX dbtasks_server_idempotency_expires_idx ON dbtasks_server_idempotency (expires_at);
