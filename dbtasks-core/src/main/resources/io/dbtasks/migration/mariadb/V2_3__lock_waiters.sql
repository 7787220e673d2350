-- Waiters of lease locks, first come first served: tickets from dbtasks_token_seq, each alive
-- until expires_at unless its waiter checks in again. Times are UTC; names compare exactly.
CREATE TABLE dbtasks_lock_waiter (
    name        VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    ticket      BIGINT       NOT NULL,
    owner       VARCHAR(200) NOT NULL,
    expires_at  DATETIME(6)  NOT NULL,
    CONSTRAINT dbtasks_lock_waiter_pk PRIMARY KEY (name, ticket)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
