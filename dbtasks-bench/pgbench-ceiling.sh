#!/usr/bin/env bash
# A cross-check of the bench's ceiling with pgbench, PostgreSQL's own load generator: the same
# claim-and-complete cycle on the dbtasks_task table, with no JVM or JDBC driver in the way.
#
#   dbtasks-bench/pgbench-ceiling.sh [clients ...]        (default: 1 2 4 8 16 32)
#
# Each pgbench transaction claims BATCH due tasks with the engine's claim (UPDATE ... WHERE id =
# ANY(ARRAY(SELECT id ... ORDER BY priority DESC, run_at, id LIMIT BATCH FOR UPDATE SKIP LOCKED))
# RETURNING id) and marks them SUCCEEDED, in one of two modes:
#   split: claim and completion committed separately, as the engine and the bench's ceiling do;
#   fused: both in one transaction, one commit per batch (a lower bound on the cost of a cycle).
# Before each run the table is truncated and BACKLOG pending tasks are inserted (more than a run can
# burn down, so no claim comes back empty); each run lasts DURATION seconds with -c clients and
# -j 2 threads. tasks/s is pgbench's transactions/s times BATCH, and is checked against the
# SUCCEEDED rows counted afterwards; a run that burned the whole backlog (its last claims came back
# empty and still counted as transactions) is marked "exhausted" and left out of the best: raise
# BACKLOG or lower DURATION.
#
# The database needs the dbtasks schema: run the bench against it once (it migrates), e.g.
#   java -jar dbtasks-bench/target/dbtasks-bench.jar --url "jdbc:postgresql://127.0.0.1:5432/DB?user=postgres" \
#     --scenario ceiling --tasks 1000 --ceiling-workers 1 --ceiling-batches 10
# It TRUNCATES dbtasks_task and dbtasks_attempt: point it at a dedicated database.
set -euo pipefail

PGHOST="${PGHOST:-127.0.0.1}"
PGPORT="${PGPORT:-5432}"
PGUSER="${PGUSER:-postgres}"
PGDATABASE="${PGDATABASE:-dbtasks_bench}"
export PGHOST PGPORT PGUSER PGDATABASE
BATCH="${BATCH:-100}"
BACKLOG="${BACKLOG:-1000000}"
DURATION="${DURATION:-10}"
MODES="${MODES:-split fused}"
clients=("$@")
[[ ${#clients[@]} -eq 0 ]] && clients=(1 2 4 8 16 32)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The claim: the engine's statement, its SET list as the bench's ceiling writes it. The claimed ids
# leave as one quoted array literal for the completion (pgbench substitutes variables as text).
claim="WITH c AS (UPDATE dbtasks_task SET status = 'RUNNING', attempt = attempt + 1, lease_owner = 'pgbench',
  lease_token = nextval('dbtasks_token_seq'), lease_expires_at = clock_timestamp(), heartbeat_at = clock_timestamp(),
  started_at = clock_timestamp(), updated_at = clock_timestamp(), cancel_requested = FALSE
  WHERE id = ANY(ARRAY(SELECT id FROM dbtasks_task WHERE queue = 'bench' AND status = 'PENDING'
    AND run_at <= clock_timestamp() ORDER BY priority DESC, run_at, id LIMIT $BATCH FOR UPDATE SKIP LOCKED))
  RETURNING id)
SELECT COALESCE(quote_literal(array_agg(id)::text), '''{}''') AS ids FROM c \\gset"
complete="UPDATE dbtasks_task SET status = 'SUCCEEDED', finished_at = clock_timestamp(), last_error = NULL,
  lease_owner = NULL, lease_expires_at = NULL, cancel_requested = FALSE, updated_at = clock_timestamp()
  WHERE id = ANY(:ids::bigint[]) AND (status || '') = 'RUNNING';"

# pgbench reads one SQL command per line unless it ends with a semicolon or \gset: join the lines.
oneline() { tr '\n' ' ' <<<"$1"; echo; }
{ oneline "$claim"; oneline "$complete"; } >"$work/split.sql"
{ echo "BEGIN;"; oneline "$claim"; oneline "$complete"; echo "COMMIT;"; } >"$work/fused.sql"

reset() {
  psql -q -v ON_ERROR_STOP=1 <<SQL
TRUNCATE dbtasks_task, dbtasks_attempt;
INSERT INTO dbtasks_task (queue, kind, status, priority, attempt, max_attempts, backoff, backoff_initial_ms,
  backoff_max_ms, backoff_multiplier, backoff_jitter, run_at, created_at, updated_at, started_at, finished_at)
SELECT 'bench', 'bench.noop', 'PENDING', 0, 0, 3, 'EXPONENTIAL', 1000, 600000, 2.0, 0.2,
  clock_timestamp(), clock_timestamp(), clock_timestamp(), NULL, NULL
FROM generate_series(1::bigint, $BACKLOG);
VACUUM (ANALYZE) dbtasks_task;
SQL
  psql -q -c CHECKPOINT 2>/dev/null || true
}

echo "pgbench ceiling on $PGDATABASE@$PGHOST:$PGPORT: batch $BATCH, backlog $BACKLOG, ${DURATION}s per run, $(pgbench --version)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %8s %10s %10s %12s %12s\n' mode clients tps tasks/s succeeded succeeded/s
best=0
best_at=""
for mode in $MODES; do
  for c in "${clients[@]}"; do
    reset
    out="$(pgbench -n -M simple -c "$c" -j 2 -T "$DURATION" -f "$work/$mode.sql" 2>&1)" || {
      echo "$out" >&2
      exit 1
    }
    tps="$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out")"
    [[ -z "$tps" ]] && tps="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)"
    succeeded="$(psql -qtA -c "SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'")"
    tasks="$(awk -v t="$tps" -v b="$BATCH" 'BEGIN { printf "%.0f", t * b }')"
    note=""
    if (( succeeded >= BACKLOG )); then
      note="  exhausted"
    fi
    printf '%-6s %8s %10.1f %10s %12s %12.0f%s\n' "$mode" "$c" "$tps" "$tasks" "$succeeded" \
      "$(awk -v s="$succeeded" -v d="$DURATION" 'BEGIN { print s / d }')" "$note"
    if [[ -z "$note" ]] && (( tasks > best )); then
      best=$tasks
      best_at="$mode -c $c"
    fi
  done
done
echo "best: $best tasks/s ($best_at, batch $BATCH)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
psql -q -c "TRUNCATE dbtasks_task, dbtasks_attempt"
