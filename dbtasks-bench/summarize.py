#!/usr/bin/env python3
"""Medians over the runs of run-benchmarks.sh.

    python3 dbtasks-bench/summarize.py OUT        (prints Markdown; run-benchmarks.sh saves it as OUT/summary.md)

Reads every results-<db>.csv under OUT/<db>/run-<n>/ (and its processes/ and handlers/ folders),
groups the rows of one database by scenario and configuration, with the figures that differ from
run to run taken out of the configuration (a ratio after the colon, "of max N/s = M/s"), and prints
for each group the number of runs, the median of tasks/s with its minimum and maximum, and the
median (minimum-maximum) of every ratio and latency percentile the rows carry, including the ratios
written into the configuration ("x success-only 0.55", "x ideal 0.67", "x P=1 0.81"). The median of an
even number of runs is the mean of the middle two. Per run it also gives the best ceiling and the
best burn-down's share of it, and (when the run has it) the ceiling's best point rerun with attempt rows:
its rate, its share of that run's ceiling, its ratio to the same point rerun without them beside it,
and the best burn-down against it.
"""
import csv
import re
import statistics
import sys
from collections import OrderedDict, defaultdict
from pathlib import Path

RATIO_IN_CONFIG = re.compile(r"x ([A-Za-z][\w=\-]*(?: [\w=\-]+)?) (\d+(?:\.\d+)?)")
MAX_RATE = re.compile(r"of (sustained )?max \d+/s = \d+/s")
JAVA = re.compile(r" \(Java [^)]*\)")


def key_of(config):
    base = config.split(":", 1)[0]
    base = MAX_RATE.sub(r"of \1max", base)
    return JAVA.sub("", base).strip()


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    m = statistics.median(values)
    if len(values) == 1:
        return fmt(m)
    return "%s (%s-%s)" % (fmt(m), fmt(min(values)), fmt(max(values)))


def fmt(v):
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def main(out):
    out = Path(out)
    rows = defaultdict(lambda: OrderedDict())  # db -> key -> list of (run, row)
    ceilings = defaultdict(dict)  # db -> run -> best ceiling
    best_burndown = defaultdict(dict)  # db -> run -> best burn-down x ceiling
    with_attempts = defaultdict(dict)  # db -> run -> the best ceiling point rerun with attempt rows
    rerun = defaultdict(dict)  # db -> run -> the same point rerun without them, beside those
    burndown_rate = defaultdict(dict)  # db -> run -> best burn-down tasks/s
    for csv_path in sorted(out.glob("*/run-*/**/results-*.csv")):
        run = next(p for p in csv_path.parts if p.startswith("run-"))
        with open(csv_path, newline="") as f:
            for row in csv.DictReader(f):
                db = row["database"]
                key = (row["scenario"], key_of(row["config"]))
                rows[db].setdefault(key, []).append((run, row))
                rate = number(row["tasks_per_s"])
                if row["scenario"] == "ceiling" and rate is not None and "with attempt rows" in row["config"]:
                    with_attempts[db][run] = rate
                elif row["scenario"] == "ceiling" and rate is not None and "without attempt rows" in row["config"]:
                    rerun[db][run] = rate
                elif row["scenario"] == "ceiling" and rate is not None:
                    ceilings[db][run] = max(ceilings[db].get(run, 0), rate)
                ratio = number(row.get("ratio_to_ceiling"))
                if row["scenario"] == "burndown" and ratio is not None:
                    best_burndown[db][run] = max(best_burndown[db].get(run, 0), ratio)
                if row["scenario"] == "burndown" and rate is not None:
                    burndown_rate[db][run] = max(burndown_rate[db].get(run, 0), rate)
    if not rows:
        print("no results-*.csv under %s/<db>/run-<n>/" % out)
        return
    for db, groups in rows.items():
        runs = sorted({run for members in groups.values() for run, _ in members})
        print("## %s (%d run%s)\n" % (db, len(runs), "" if len(runs) == 1 else "s"))
        if ceilings[db]:
            print("- best ceiling per run: %s; median %s"
                  % (", ".join("%s %.0f" % (r, ceilings[db][r]) for r in sorted(ceilings[db])),
                     fmt(statistics.median(ceilings[db].values()))))
        if best_burndown[db]:
            print("- best burn-down x ceiling per run: %s; median %s"
                  % (", ".join("%s %.2f" % (r, best_burndown[db][r]) for r in sorted(best_burndown[db])),
                     fmt(statistics.median(best_burndown[db].values()))))
        if with_attempts[db]:
            print("- ceiling with attempt rows (its best point rerun) per run: %s; median %s"
                  % (", ".join("%s %.0f" % (r, with_attempts[db][r]) for r in sorted(with_attempts[db])),
                     fmt(statistics.median(with_attempts[db].values()))))
            to_ceiling = {r: with_attempts[db][r] / ceilings[db][r] for r in with_attempts[db] if r in ceilings[db]}
            if to_ceiling:
                print("- ceiling with attempt rows x that run's ceiling: %s; median %s"
                      % (", ".join("%s %.2f" % (r, to_ceiling[r]) for r in sorted(to_ceiling)),
                         fmt(statistics.median(to_ceiling.values()))))
            paired = {r: with_attempts[db][r] / rerun[db][r] for r in with_attempts[db] if r in rerun[db]}
            if paired:
                print("- ceiling with attempt rows x the same point rerun without them (alternating): %s; median %s"
                      % (", ".join("%s %.2f" % (r, paired[r]) for r in sorted(paired)),
                         fmt(statistics.median(paired.values()))))
            shares = {r: burndown_rate[db][r] / with_attempts[db][r]
                      for r in with_attempts[db] if r in burndown_rate[db]}
            if shares:
                print("- best burn-down x ceiling with attempt rows per run: %s; median %s"
                      % (", ".join("%s %.2f" % (r, shares[r]) for r in sorted(shares)),
                         fmt(statistics.median(shares.values()))))
        print()
        print("| scenario | config | runs | tasks/s median (min-max) | x ceiling | x db-scheduler | x JobRunr"
              " | other ratios | p50 ms | p99 ms |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for (scenario, config), members in groups.items():
            values = [r for _, r in members]
            extra = defaultdict(list)
            for r in values:
                tail = r["config"].split(":", 1)[1] if ":" in r["config"] else r["config"]
                for name, v in RATIO_IN_CONFIG.findall(tail):
                    extra[name].append(float(v))
            others = "; ".join("x %s %s" % (n, spread(v)) for n, v in extra.items()) or "-"
            print("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                scenario,
                config,
                len(values),
                spread([number(r["tasks_per_s"]) for r in values]),
                spread([number(r.get("ratio_to_ceiling")) for r in values]),
                spread([number(r.get("ratio_to_peer")) for r in values]),
                spread([number(r.get("ratio_to_jobrunr")) for r in values]),
                others,
                spread([number(r.get("p50_ms")) for r in values]),
                spread([number(r.get("p99_ms")) for r in values]),
            ))
        print()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: summarize.py OUT")
    main(sys.argv[1])
