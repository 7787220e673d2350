-- An IN_FLIGHT Idempotency-Key record names the server process that holds it (its engine's worker id)
-- and a lease (epoch milliseconds) that process renews while the request runs. Once the lease has
-- passed, the process is taken to be gone and another request with the key may take the record over.
-- Records written before this version have neither: their lease counts from created_at.
ALTER TABLE dbtasks_server_idempotency ADD COLUMN owner_id VARCHAR(200);
ALTER TABLE dbtasks_server_idempotency ADD COLUMN lease_until BIGINT;
