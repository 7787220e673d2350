#!/usr/bin/env bash
# The history-at-scale figures of BENCHMARKS.md: for each database and size, RUNS (default 3) runs
# of the history scenario (HistoryScenario: finished tasks and attempts loaded directly, the
# burn-down at W = 32 against the same run's burn-down with empty history, the dashboard's reads,
# one retention sweep of the oldest of 30 days). Each run writes OUT/<db>-<size>/run-<n>/ and
# records the load average before and after in OUT/load.txt.
#
#   dbtasks-bench/run-history.sh postgresql:1000000 mariadb:1000000 postgresql:10000000
#   RUNS=1 SKIP_BUILD=1 dbtasks-bench/run-history.sh postgresql:10000000
#
# Databases: dbtasks_bench on both servers unless PG_URL / MARIADB_URL say otherwise; the scenario
# truncates the dbtasks tables (10M tasks take about 6 GB on PostgreSQL).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${OUT:-docs/bench/history}"
RUNS="${RUNS:-3}"
# 200,000 tasks: a burn-down of 30,000 lasts under a second, shorter than the JIT and the caches
# take to settle, and its ratio swings with them.
TASKS="${TASKS:-200000}"
PG_URL="${PG_URL:-jdbc:postgresql://127.0.0.1:5432/dbtasks_bench?user=postgres}"
MARIADB_URL="${MARIADB_URL:-jdbc:mariadb://127.0.0.1:3306/dbtasks_bench?user=root}"
JAR="${JAR:-dbtasks-bench/target/dbtasks-bench.jar}"

if [[ -z "${SKIP_BUILD:-}" ]]; then
  ./mvnw -q -B -pl dbtasks-bench -am package -DskipTests
fi
mkdir -p "$OUT"
for target in "$@"; do
  db="${target%%:*}" size="${target#*:}"
  case "$db" in
    postgresql) url="$PG_URL" ;;
    mariadb) url="$MARIADB_URL" ;;
    *) echo "unknown database $db (postgresql or mariadb)" >&2; exit 2 ;;
  esac
  for ((r = 1; r <= RUNS; r++)); do
    dir="$OUT/$db-$size/run-$r"
    mkdir -p "$dir"
    echo "$db $size run $r before: $(uptime)" | tee -a "$OUT/load.txt"
    java -jar "$JAR" --url "$url" --scenario history --history-tasks "$size" --history-workers 32 \
      --tasks "$TASKS" --wipe --out "$dir" 2>&1 | tee "$dir/run.log"
    echo "$db $size run $r after:  $(uptime)" | tee -a "$OUT/load.txt"
  done
done
