-- Fencing tokens on a MariaDB Galera cluster. There a sequence hands the same value to transactions
-- on different nodes (its draws are not certified), so on Galera the engine draws tokens from this
-- row instead, through the function dbtasks_next_token() that it creates on a Galera node at start:
-- each draw updates the row in the caller's transaction, Galera certifies the update like any row's,
-- and of two concurrent draws on two nodes one commits and the other is rolled back (1213). Unused
-- on a MariaDB server without Galera; seeded above every value the sequence may have handed out.
CREATE TABLE dbtasks_token_counter (
    id         INT    NOT NULL PRIMARY KEY,
    last_token BIGINT NOT NULL
) ENGINE = InnoDB;

INSERT INTO dbtasks_token_counter (id, last_token)
SELECT 1, next_not_cached_value FROM dbtasks_token_seq;
