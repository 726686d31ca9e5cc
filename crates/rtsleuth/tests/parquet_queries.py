#!/usr/bin/env python3
"""The README's example queries over `rtsleuth explain --parquet OUT tests/fixtures/lab`,
run with DuckDB and checked against the lab's truth (each run's expected.json, written from
the injector's own events, never by rtsleuth).

Usage: parquet_queries.py OUT LAB RTSLEUTH
  OUT       the --parquet directory
  LAB       tests/fixtures/lab
  RTSLEUTH  the binary, for the merged p99 it computes itself (compared with the SQL one)

Prints each query's result; exits non-zero with the reason at the first check that fails.
"""

import json
import pathlib
import re
import subprocess
import sys

import duckdb

out, lab, rtsleuth = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
con = duckdb.connect()
for table in ["traces", "findings", "stretches", "latency", "histograms"]:
    con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{out / table}.parquet')")

# The lab's text traces carry no uname; its README names each directory's kernel. The two
# trace.dat files do carry it, and must agree (checked below).
LAB_KERNELS = {"stock": "6.12.95+deb12-amd64", "rt": "6.12.95+deb12-rt-amd64", "tracer": "6.12.95",
               "arm64-stock": "6.12.95+deb12-arm64", "arm64-rt": "6.12.95+deb12-rt-arm64",
               "armv7-stock": "6.12.95+deb12-armmp", "armv7-rt": "6.12.95+deb12-rt-armmp"}
con.execute("CREATE TABLE lab_kernels (dir VARCHAR, kernel VARCHAR)")
con.executemany("INSERT INTO lab_kernels VALUES (?, ?)", list(LAB_KERNELS.items()))

TOP_CULPRITS = """
SELECT root_cause, coalesce(culprit_task, culprit, '-') AS culprit,
       count(DISTINCT path) AS traces, count(*) AS findings,
       round(sum(latency_us)) AS total_us, list(DISTINCT path ORDER BY path) AS paths
FROM findings
WHERE latency_us >= 15000
GROUP BY ALL
ORDER BY traces DESC, total_us DESC
"""

# Nearest rank over the merged buckets of every trace of a kernel: the lowest bucket at which
# the running count reaches ceil(0.99 n). One trace per run: its event trace.
P99_BY_KERNEL = """
WITH kernel_of AS (
    SELECT t.path, coalesce(t.kernel, k.kernel) AS kernel
    FROM traces t JOIN lab_kernels k ON k.dir = regexp_extract(t.path, 'lab/([^/]+)/', 1)
    WHERE t.path LIKE '%/trace.txt.zst'
), buckets AS (
    SELECT kernel, lower_ns, sum(count) AS n
    FROM histograms JOIN kernel_of USING (path)
    WHERE task = 'cyclictest'
    GROUP BY ALL
), running AS (
    SELECT kernel, lower_ns,
           sum(n) OVER (PARTITION BY kernel ORDER BY lower_ns) AS below,
           sum(n) OVER (PARTITION BY kernel) AS wakeups
    FROM buckets
)
SELECT kernel, any_value(wakeups) AS wakeups, min(lower_ns) / 1000 AS p99_us
FROM running
WHERE below >= ceil(0.99 * wakeups)
GROUP BY kernel
ORDER BY kernel
"""

BLACK_HOLES = """
SELECT path, round(max(us), 3) AS black_hole_us
FROM (SELECT path, finding, sum(us) AS us FROM stretches WHERE kind = 'black_hole' GROUP BY ALL)
GROUP BY path
HAVING max(us) > 100
ORDER BY path
"""


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def task_key(comm):
    stripped = comm.rstrip("0123456789")
    return stripped or comm


def show(title, sql):
    rel = con.sql(sql)
    print(f"-- {title}")
    print(rel)
    return rel.fetchall()


runs = []
for expected in sorted(lab.glob("*/*/expected.json")):
    want = json.loads(expected.read_text())
    runs.append((expected.parent, want))

# 1. Top culprits: every injected culprit is there, with its own run's trace.
rows = show("top culprits across all traces", TOP_CULPRITS)
for d, want in runs:
    if not want["spike"]:
        continue
    trace = str(d / "trace.txt.zst")
    # A stop whose silence the trace cannot prove (expected.json `provable: false`) is unknown.
    kind = "unknown" if want.get("provable") is False else want["class"]
    if kind == "hardirq":
        match = lambda c: c == want["function"] or c.startswith(want["function"] + " [")
    elif kind == "softirq":
        match = lambda c: c == "softirq 6 (TASKLET)"
    elif kind in ("black_hole", "unknown"):
        match = lambda c: c == "-"
    else:
        comm = want["culprit"].rsplit("-", 1)[0]
        match = lambda c, comm=comm: c == task_key(comm)
    hits = [r for r in rows if r[0] == kind and match(r[1]) and any(p.endswith(trace) for p in r[5])]
    if not hits:
        fail(f"{d}: no {kind} row naming {want.get('culprit') or want.get('function')} with {trace}")
    print(f"ok {d.relative_to(lab)}: {kind} {hits[0][1]}")

# 2. p99 by kernel, from merged buckets; the same as rtsleuth's own merge of those traces.
for path, kernel, uname in con.sql("SELECT path, kernel, uname FROM traces WHERE uname IS NOT NULL").fetchall():
    d = re.search(r"lab/([^/]+)/", path).group(1)
    if kernel != LAB_KERNELS[d]:
        fail(f"{path}: uname says {kernel}, the lab README {LAB_KERNELS[d]}")
rows = show("p99 of cyclictest by kernel version (merged histograms)", P99_BY_KERNEL)
if sorted(r[0] for r in rows) != sorted(LAB_KERNELS[d.name] for d in lab.iterdir() if d.is_dir()):
    fail(f"kernels {rows}")
for kernel, wakeups, p99 in rows:
    d = next(k for k, v in LAB_KERNELS.items() if v == kernel)
    traces = sorted(str(p) for p in lab.glob(f"{d}/*/trace.txt.zst"))
    got = json.loads(subprocess.run([rtsleuth, "latency", "--json", "--task", "cyclictest", *traces],
                                    check=True, capture_output=True, text=True).stdout)
    mine = next(t for t in got["set"]["tasks"] if t["task"] == "cyclictest")
    if (mine["wakeups"], mine["p99_us"]) != (wakeups, p99):
        fail(f"{kernel}: SQL says {wakeups} wake-ups p99 {p99} us, rtsleuth's set {mine['wakeups']} p99 {mine['p99_us']}")
    averaged = sum(t["p99_us"] for t in con.sql(
        f"SELECT p99_us FROM latency JOIN (SELECT unnest({traces}) AS path) USING (path) WHERE task = 'cyclictest'"
    ).fetchall() for t in [dict(p99_us=t[0])]) / len(traces)
    print(f"ok {kernel}: p99 {p99} us over {wakeups} wake-ups (the average of the runs' p99s would say {averaged:.1f})")

# 3. Black holes over 100 us: every injected stop is there.
rows = show("traces where black_hole exceeded 100 us", BLACK_HOLES)
found = {r[0] for r in rows}
# A stop the trace cannot prove (`provable: false`: its silence ends inside a handler or a
# thread, not at an interrupt's arrival) is unknown time there, not a black hole.
stops = [d for d, w in runs if w.get("class") == "black_hole"]
provable = [d for d, w in runs if w.get("class") == "black_hole" and w.get("provable") is not False]
for d in provable:
    if not any(p.endswith(str(d / "trace.txt.zst")) for p in found):
        fail(f"{d}: its black hole is missing")
# TCG emulation loses 1-5 ms at random (lab/noise/README.md); only the injected stops are long,
# in the run's trace or in a peer's trace of the same run (rtla_sched/ stopped once more).
run_of = lambda p: "/".join(p.split("lab/")[1].split("/")[:2])
long = sorted({run_of(r[0]) for r in rows if r[1] > 10_000})
if not set(long) <= {run_of(str(d) + "/") for d in stops} or not {run_of(str(d) + "/") for d in provable} <= set(long):
    fail(f"black holes over 10 ms in runs {long}; injected: {[str(d) for d in stops]}, provable {[str(d) for d in provable]}")
print("ok black holes:", ", ".join(sorted(str(d.relative_to(lab)) for d, w in runs if w.get("class") == "black_hole")))
print("all queries answered as the lab's truth says")
