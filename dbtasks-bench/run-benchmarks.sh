#!/usr/bin/env bash
# The run behind BENCHMARKS.md: builds the bench jar, then measures PostgreSQL, MariaDB and H2 one
# after the other at moderate sizes, each with the ceiling swept over claimer threads and batch sizes
# and both peers (db-scheduler and JobRunr) in the same run; after PostgreSQL, the pgbench cross-check
# of the ceiling (pgbench-ceiling.sh, output in OUT/pgbench-ceiling.txt; skipped without pgbench). Before each database it waits (up to MAX_WAIT seconds) for the
# 1-minute load average to drop below MAX_LOAD, since the machine is shared, and records the load
# before and after in OUT/load.txt.
#
#   dbtasks-bench/run-benchmarks.sh [postgresql] [pgbench] [mariadb] [h2]     (default: all four)
#
# The handlers scenario runs in the main run on the default java (platform threads; virtual threads
# need Java 21+), and again with platform and virtual threads on VT_JAVA, a Java 21+ found under
# /usr/lib/jvm (the newest; e.g. Temurin 25) unless set, into OUT/virtual-threads.
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

run() { # name, url, extra args...
  local name="$1" url="$2"
  shift 2
  wait_for_quiet
  echo "$name before: $(uptime)" | tee -a "$OUT/load.txt"
  java -jar "$JAR" --url "$url" --scenario all --out "$OUT" --executor platform "$@" 2>&1 | tee "$OUT/run-$name.log"
  if [[ -n "${VT_JAVA:-}" ]]; then
    mkdir -p "$OUT/virtual-threads"
    "$VT_JAVA" -jar "$JAR" --url "$url" --scenario handlers --out "$OUT/virtual-threads" --executor platform,virtual "$@" 2>&1 \
      | tee "$OUT/virtual-threads/run-$name.log"
  else
    echo "no Java 21+ under /usr/lib/jvm (set VT_JAVA): handlers on virtual threads not measured" | tee -a "$OUT/load.txt"
  fi
  echo "$name after:  $(uptime)" | tee -a "$OUT/load.txt"
}

COMMON=(--workers 4,8,16,32 --fixed-workers 8 --enqueue-tasks 10000 --latency-rate 200 --latency-seconds 10
  --scale-min 100000 --ceiling-simple --latency-load 0.5 --enqueue-threads 16 --handler-sleep 0,1,10)
# The ceiling sweep: every claimer count with every batch (points where W x batch exceeds half the
# tasks are skipped); the best point is the ceiling every "x ceiling" divides by.
SWEEP=(--ceiling-workers 1,2,4,8,16,32,64 --ceiling-batches 10,50,100,250,500)

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
    dbtasks-bench/pgbench-ceiling.sh 1 2 4 8 16 32 2>&1 | tee "$OUT/pgbench-ceiling.txt"
}

targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(postgresql pgbench mariadb h2)
for t in "${targets[@]}"; do
  case "$t" in
    postgresql) run postgresql "$PG_URL" "${COMMON[@]}" "${SWEEP[@]}" --tasks 50000 --peer-tasks 20000 --jobrunr-tasks 10000 --processes 1,2 --soak-tasks 200000 --scale-max 1000000 --scale-batch 10000 --handler-tasks 30000 --handler-workers 64,128,256,512 ;;
    # Needs the dbtasks schema in the database, which the postgresql run above migrates.
    pgbench) pgbench_ceiling ;;
    # MariaDB commits are several times slower here (fsync per commit), so smaller counts keep its run short.
    # Scale stops at 100k there: at 1M history the retention DELETE (REPEATABLE READ) holds locks the
    # claims wait on and the burn-down crawls at ~10 tasks/s (see BENCHMARKS.md).
    mariadb) run mariadb "$MARIADB_URL" "${COMMON[@]}" "${SWEEP[@]}" --tasks 20000 --peer-tasks 10000 --jobrunr-tasks 5000 --processes 1,2 --soak-tasks 60000 --scale-max 100000 --scale-batch 10000 --handler-tasks 15000 --handler-workers 64,128,256,512 --child-warmup-tasks 5000 ;;
    # H2 has no SKIP LOCKED and its claim slows as the backlog grows (50k pending did not burn down in
    # minutes), so it gets small backlogs.
    # Its ceiling sweep stops at 16 claimers and batch 250: with 2,000 tasks larger points are skipped anyway.
    h2) run h2 "$H2_URL" "${COMMON[@]}" --ceiling-workers 1,2,4,8,16 --ceiling-batches 10,50,100,250 --tasks 2000 --peer-tasks 2000 --jobrunr-tasks 2000 --processes 1 --soak-tasks 5000 --scale-max 100000 --scale-batch 1000 --handler-tasks 10000 --handler-workers 64,512 ;;
    *) echo "unknown database $t" >&2; exit 2 ;;
  esac
done
