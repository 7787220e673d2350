-- The audit log of operator actions: one row per state-changing request of an authenticated caller,
-- through the API or the dashboard. Append-only: the server inserts rows, fills in a background
-- bulk action's touched count once, and deletes rows older than dbtasks.server.audit.retention.
-- Text is sanitized and cut to these lengths before it is stored. Times are epoch milliseconds (UTC).
CREATE TABLE dbtasks_server_audit (
    id             BIGINT        NOT NULL AUTO_INCREMENT,
    created_at     BIGINT        NOT NULL,
    actor          VARCHAR(100)  NOT NULL,
    actor_role     VARCHAR(16)   NOT NULL,
    channel        VARCHAR(16)   NOT NULL,
    action         VARCHAR(300)  NOT NULL,
    target         VARCHAR(500),
    parameters     VARCHAR(1000),
    bulk_filter    VARCHAR(1000),
    touched        BIGINT,
    outcome        VARCHAR(16)   NOT NULL,
    status         INT           NOT NULL,
    client         VARCHAR(100),
    CONSTRAINT dbtasks_server_audit_pk PRIMARY KEY (id),
    CONSTRAINT dbtasks_server_audit_outcome_check CHECK (outcome IN ('SUCCESS', 'REFUSED', 'FAILED')),
    CONSTRAINT dbtasks_server_audit_channel_check CHECK (channel IN ('api', 'dashboard'))
) ENGINE = InnoDB DEFAULT CHARACTER SET utf8mb4;
-- Newest-first paging and the retention purge go by time.
CREATE INDEX dbtasks_server_audit_created_idx ON dbtasks_server_audit (created_at);
