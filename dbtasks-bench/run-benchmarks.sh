#!/usr/bin/env bash
# The run behind BENCHMARKS.md: builds the bench jar, then measures PostgreSQL, MariaDB and H2 one
# after the other, each RUNS times (default 3), and writes the median and spread of every figure over
# the runs to OUT/summary.md (dbtasks-bench/summarize.py). Each run of a database is one bench
# invocation with the ceiling swept over claimer threads and batch sizes and both peers (db-scheduler
# and JobRunr) in the same JVM and minute as the engine's figures, then P = 1 against P = 2 in warmed
# child JVMs, then the handlers sweep (sleeping handlers up to W = 512) with platform and virtual
# threads on a Java 21+ (VT_JAVA; the newest under /usr/lib/jvm unless set; without one, platform
# threads on the default java). After PostgreSQL, once, the pgbench cross-check of the ceiling
# (pgbench-ceiling.sh, OUT/pgbench-ceiling.txt; skipped without pgbench). Before each database it
# waits (up to MAX_WAIT seconds) for the 1-minute load average to drop below MAX_LOAD, and records the
# load before and after every run in OUT/load.txt.
#
#   dbtasks-bench/run-benchmarks.sh [postgresql] [pgbench] [mariadb] [h2]     (default: all four)
#   RUNS=1 dbtasks-bench/run-benchmarks.sh postgresql                         (one quick round)
#   EXTRA=scale,soak,schedules,quartz,retention dbtasks-bench/run-benchmarks.sh
#       (also, once per database, the earlier rounds' scenarios: history scale, soak, recurring
#       schedules beside Quartz, retention beside a burn-down)
#
# Output: OUT/<db>/run-<n>/ holds each run's results-<db>.csv/.md, charts and log (the processes and
# handlers parts in processes/ and handlers/ below it); OUT/summary.md the medians.
#
# Databases: dbtasks_bench on both servers (the bench truncates its tables), e.g.
#   psql -h 127.0.0.1 -U postgres -c 'CREATE DATABASE dbtasks_bench'
#   mariadb -h127.0.0.1 -uroot -e 'CREATE DATABASE dbtasks_bench'
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${OUT:-docs/bench}"
MAX_LOAD="${MAX_LOAD:-1.5}"
MAX_WAIT="${MAX_WAIT:-900}"
PG_URL="${PG_URL:-jdbc:postgresql://127.0.0.1:5432/dbtasks_bench?user=postgres}"
MARIADB_URL="${MARIADB_URL:-jdbc:mariadb://127.0.0.1:3306/dbtasks_bench?user=root}"
H2_URL="${H2_URL:-jdbc:h2:mem:dbtasks_bench;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000}"
JAR="${JAR:-dbtasks-bench/target/dbtasks-bench.jar}"

if [[ -z "${SKIP_BUILD:-}" ]]; then
  ./mvnw -q -B -pl dbtasks-bench -am package -DskipTests
fi
mkdir -p "$OUT"

load() { cut -d' ' -f1 /proc/loadavg; }

java_major() { # java binary -> its feature version, e.g. 25
  "$1" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ { print $2 }'
}

if [[ -z "${VT_JAVA:-}" ]]; then
  for candidate in /usr/lib/jvm/*/bin/java; do
    [[ -x "$candidate" ]] || continue
    major="$(java_major "$candidate")"
    if [[ "$major" =~ ^[0-9]+$ ]] && (( major >= 21 )) && { [[ -z "${VT_JAVA:-}" ]] || (( major > $(java_major "$VT_JAVA") )); }; then
      VT_JAVA="$candidate"
    fi
  done
fi

wait_for_quiet() {
  local waited=0
  while awk -v l="$(load)" -v m="$MAX_LOAD" 'BEGIN { exit !(l >= m) }'; do
    if (( waited >= MAX_WAIT )); then
      echo "load still $(load) after ${MAX_WAIT}s; measuring anyway" >&2
      return
    fi
    sleep 15
    waited=$((waited + 15))
  done
}

RUNS="${RUNS:-3}"
EXTRA="${EXTRA:-}"
# The figures the throughput targets are about, measured RUNS times.
SCENARIOS="ceiling,peer,jobrunr,burndown,failonce,enqueue,latency"

run() { # name, url, names of the arrays of: main args, processes args (empty: none), handlers args
  local name="$1" url="$2"
  local -n main_args="$3" proc_args="$4" handler_args="$5"
  wait_for_quiet
  for ((r = 1; r <= RUNS; r++)); do
    local dir="$OUT/$name/run-$r"
    mkdir -p "$dir/handlers"
    echo "$name run $r before: $(uptime)" | tee -a "$OUT/load.txt"
    java -jar "$JAR" --url "$url" --scenario "$SCENARIOS" --out "$dir" "${main_args[@]}" 2>&1 | tee "$dir/run.log"
    if [[ ${#proc_args[@]} -gt 0 ]]; then
      mkdir -p "$dir/processes"
      java -jar "$JAR" --url "$url" --scenario processes --out "$dir/processes" "${proc_args[@]}" 2>&1 \
        | tee "$dir/processes/run.log"
    fi
    if [[ -n "${VT_JAVA:-}" ]]; then
      "$VT_JAVA" -jar "$JAR" --url "$url" --scenario handlers --out "$dir/handlers" --executor platform,virtual \
        "${handler_args[@]}" 2>&1 | tee "$dir/handlers/run.log"
    else
      echo "no Java 21+ under /usr/lib/jvm (set VT_JAVA): handlers on platform threads only" | tee -a "$OUT/load.txt"
      java -jar "$JAR" --url "$url" --scenario handlers --out "$dir/handlers" --executor platform \
        "${handler_args[@]}" 2>&1 | tee "$dir/handlers/run.log"
    fi
    echo "$name run $r after:  $(uptime)" | tee -a "$OUT/load.txt"
  done
  if [[ -n "$EXTRA" ]]; then
    mkdir -p "$OUT/$name/extra"
    java -jar "$JAR" --url "$url" --scenario "$EXTRA" --out "$OUT/$name/extra" "${main_args[@]}" 2>&1 \
      | tee "$OUT/$name/extra/run.log"
  fi
}

pgbench_ceiling() {
  if ! command -v pgbench >/dev/null; then
    echo "pgbench not installed: no pgbench cross-check" | tee "$OUT/pgbench-ceiling.txt"
    return
  fi
  # jdbc:postgresql://HOST:PORT/DB?user=USER
  local rest="${PG_URL#jdbc:postgresql://}"
  local hostport="${rest%%/*}" db="${rest#*/}"
  local user=postgres
  [[ "$db" == *user=* ]] && user="$(sed 's/.*user=\([^&]*\).*/\1/' <<<"$db")"
  db="${db%%\?*}"
  wait_for_quiet
  PGHOST="${hostport%%:*}" PGPORT="${hostport##*:}" PGUSER="$user" PGDATABASE="$db" \
    BACKLOG="${PGBENCH_BACKLOG:-500000}" DURATION="${PGBENCH_SECONDS:-5}" \
    dbtasks-bench/pgbench-ceiling.sh 1 2 4 8 16 32 2>&1 | tee "$OUT/pgbench-ceiling.txt"
}

# Shared by every database: the targets' worker counts, a 10k-task enqueue from one and from 16
# threads, latency idle and at half the measured burn-down rate. The ceiling sweep: every claimer
# count with every batch (points where W x batch exceeds half the tasks are skipped); its best point
# is the ceiling every "x ceiling" divides by.
COMMON=(--workers 8,32,64 --fixed-workers 8 --enqueue-tasks 10000 --enqueue-threads 16 --latency-rate 200
  --latency-seconds 10 --latency-load 0.35,0.5)
SWEEP=(--ceiling-workers 1,2,4,8,16,32,64 --ceiling-batches 50,100,250,500)
HANDLERS=(--handler-workers 64,512 --handler-sleep 0,1,10)

targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(postgresql pgbench mariadb h2)
for t in "${targets[@]}"; do
  case "$t" in
    postgresql)
      PG_MAIN=("${COMMON[@]}" "${SWEEP[@]}" --tasks 100000 --peer-tasks 20000 --jobrunr-tasks 3000
        --soak-tasks 200000 --scale-min 100000 --scale-max 1000000 --scale-batch 10000)
      PG_PROC=(--workers 32 --tasks 50000 --child-warmup-tasks 20000)
      PG_HANDLERS=("${HANDLERS[@]}" --handler-tasks 150000)
      run postgresql "$PG_URL" PG_MAIN PG_PROC PG_HANDLERS ;;
    # Needs the dbtasks schema in the database, which the postgresql run above migrates.
    pgbench) pgbench_ceiling ;;
    # MariaDB commits are several times slower here (fsync per commit), so smaller counts keep its run
    # short. Scale stops at 100k there: at 1M history the retention DELETE (REPEATABLE READ) holds
    # locks the claims wait on and the burn-down crawls at ~10 tasks/s (see BENCHMARKS.md).
    mariadb)
      MDB_MAIN=("${COMMON[@]}" "${SWEEP[@]}" --tasks 30000 --peer-tasks 10000 --jobrunr-tasks 2000
        --soak-tasks 60000 --scale-min 100000 --scale-max 100000 --scale-batch 10000)
      MDB_PROC=(--workers 32 --tasks 20000 --child-warmup-tasks 5000)
      MDB_HANDLERS=("${HANDLERS[@]}" --handler-tasks 20000)
      run mariadb "$MARIADB_URL" MDB_MAIN MDB_PROC MDB_HANDLERS ;;
    # H2 runs in the bench's JVM (no child processes). Its ceiling sweep stops at 16 claimers: without
    # SKIP LOCKED more claimers only collide.
    h2)
      H2_MAIN=("${COMMON[@]}" --ceiling-workers 1,2,4,8,16 --ceiling-batches 50,100,250,500 --tasks 20000
        --peer-tasks 20000 --jobrunr-tasks 500 --soak-tasks 50000 --scale-min 100000 --scale-max 100000
        --scale-batch 1000)
      H2_PROC=()
      H2_HANDLERS=("${HANDLERS[@]}" --handler-tasks 20000)
      run h2 "$H2_URL" H2_MAIN H2_PROC H2_HANDLERS ;;
    *) echo "unknown database $t" >&2; exit 2 ;;
  esac
done

if command -v python3 >/dev/null; then
  python3 dbtasks-bench/summarize.py "$OUT" | tee "$OUT/summary.md"
else
  echo "python3 not found: no OUT/summary.md (the per-run results are in OUT/<db>/run-<n>/)" >&2
fi
