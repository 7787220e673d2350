-- Waiters of lease locks, first come first served: tickets from dbtasks_token_seq, each alive
-- until expires_at unless its waiter checks in again.
CREATE TABLE dbtasks_lock_waiter (
    name        VARCHAR(200) NOT NULL,
    ticket      BIGINT       NOT NULL,
    owner       VARCHAR(200) NOT NULL,
    expires_at  TIMESTAMP(6) WITH TIME ZONE  NOT NULL,
    CONSTRAINT dbtasks_lock_waiter_pk PRIMARY KEY (name, ticket)
);
