-- Workflows: a graph of steps, each a task, where a step waits for the steps it depends on; see
-- the PostgreSQL migration. WAITING rows sit in their own range of the claim index (queue, status,
-- ...), so waiting steps cost the claim nothing.
CREATE TABLE dbtasks_workflow (
    id          BIGINT AUTO_INCREMENT PRIMARY KEY,
    name        VARCHAR(200) NOT NULL,
    created_at  DATETIME(6)  NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Added last and nullable, so InnoDB adds them in place (instant); the CHECK below does not.
ALTER TABLE dbtasks_task
    ADD COLUMN workflow_id BIGINT,
    ADD COLUMN step VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
    ADD COLUMN waiting_for INT,
    ADD COLUMN blocked_by BIGINT,
    ADD COLUMN result MEDIUMTEXT CHARACTER SET utf8mb4;

-- A step's name is unique within its workflow (NULLs, tasks outside workflows, do not collide).
CREATE UNIQUE INDEX dbtasks_task_workflow_step_idx ON dbtasks_task (workflow_id, step);

CREATE TABLE dbtasks_dependency (
    task_id     BIGINT      NOT NULL,
    depends_on  BIGINT      NOT NULL,
    on_failure  VARCHAR(32) NOT NULL,
    -- Whether the end of depends_on has counted down task_id's waiting_for, so that it counts once;
    -- a retry of depends_on sets it back (and the counter up) while task_id has not started.
    satisfied   BOOLEAN     NOT NULL DEFAULT FALSE,
    PRIMARY KEY (depends_on, task_id),
    CONSTRAINT dbtasks_dependency_on_failure_check CHECK (on_failure IN ('CANCEL', 'RUN', 'RUN_IF_ANY_FAILED'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
CREATE INDEX dbtasks_dependency_task_idx ON dbtasks_dependency (task_id);

-- WAITING joins the states. Adding a CHECK constraint is not done in place: MariaDB copies the
-- whole task table (ALGORITHM=COPY) to check every row, and writes to it wait meanwhile. On a large
-- task table, run the migration when the engines are stopped or quiet.
ALTER TABLE dbtasks_task DROP CONSTRAINT dbtasks_task_status_check;
ALTER TABLE dbtasks_task ADD CONSTRAINT dbtasks_task_status_check
    CHECK (status IN ('WAITING', 'PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'));
