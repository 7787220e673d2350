-- Times are DATETIME(6) in UTC, as in dbtasks_task. Names and slot keys compare exactly (see V2_1).
-- Recurring schedules (io.dbtasks.schedule): one row per schedule, holding its definition and the
-- slot it fires next. Engines poll rows whose next_slot is due (database time) with FOR UPDATE SKIP
-- LOCKED, enqueue each slot's task under the unique idempotency key 'schedule:<name>@<slot>' and
-- advance next_slot, version-guarded, in the same transaction.
CREATE TABLE dbtasks_schedule (
    name                  VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    trigger_type          VARCHAR(16)  NOT NULL,
    cron                  VARCHAR(200),
    cron_syntax           VARCHAR(16),
    zone                  VARCHAR(64),
    period_ms             BIGINT,
    task_kind             VARCHAR(200) NOT NULL,
    task_queue            VARCHAR(200) NOT NULL,
    task_payload          LONGTEXT,
    task_priority         INT          NOT NULL,
    task_max_attempts     INT,
    missed_slots          VARCHAR(16)  NOT NULL,
    missed_slots_max      INT          NOT NULL,
    misfire_threshold_ms  BIGINT       NOT NULL,
    start_at              DATETIME(6),
    paused                BOOLEAN      NOT NULL,
    declared_in_code      BOOLEAN      NOT NULL,
    -- NULL while paused, while a fixed delay waits for its task, or when a cron fires no more.
    next_slot             DATETIME(6),
    last_slot             DATETIME(6),
    last_task_key         VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
    version               BIGINT       NOT NULL,
    created_at            DATETIME(6)  NOT NULL,
    updated_at            DATETIME(6)  NOT NULL,
    CONSTRAINT dbtasks_schedule_pk PRIMARY KEY (name),
    CONSTRAINT dbtasks_schedule_trigger_check CHECK (
        (trigger_type = 'CRON' AND cron IS NOT NULL AND cron_syntax IN ('SPRING', 'QUARTZ') AND zone IS NOT NULL)
        OR (trigger_type IN ('FIXED_RATE', 'FIXED_DELAY') AND period_ms > 0)),
    CONSTRAINT dbtasks_schedule_missed_check CHECK (
        missed_slots IN ('SKIP', 'RUN_LATEST', 'RUN_EACH') AND missed_slots_max >= 0),
    CONSTRAINT dbtasks_schedule_threshold_check CHECK (misfire_threshold_ms >= 0)
) ENGINE = InnoDB DEFAULT CHARACTER SET utf8mb4;
-- The poll: the earliest next slot, and the due rows in slot order.
CREATE INDEX dbtasks_schedule_next_idx ON dbtasks_schedule (next_slot);
