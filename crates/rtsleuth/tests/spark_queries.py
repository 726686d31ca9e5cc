#!/usr/bin/env python3
"""Runs the README's Spark SQL queries in PySpark (local mode) and its DuckDB queries in
DuckDB, over the same `rtsleuth explain --parquet` tables of the lab, and checks that the two
engines return the same rows; then checks answers against the lab's truth (each run's
expected.json and kernel.txt, written by the lab, never by rtsleuth or either engine).

The queries are read out of README.md, not copied here, so the README cannot show a query
that this script does not run: the DuckDB block is the first ```sql block after "In DuckDB,
with one view per file", the Spark block the first after "The same queries in Spark SQL".
The n-th statement of one block is paired with the n-th of the other.

Usage: spark_queries.py OUT LAB README
  OUT     the --parquet directory of `rtsleuth explain --parquet OUT LAB`
  LAB     tests/fixtures/lab (the path given to explain, so the tables' paths start with it)
  README  README.md

Prints each pair's row count, then "spark and duckdb agree on N queries"; exits non-zero with
the reason at the first difference or wrong answer.
"""

import decimal
import json
import math
import os
import pathlib
import re
import sys
import tempfile

import duckdb
from pyspark.sql import SparkSession

out, lab, readme = (pathlib.Path(a) for a in sys.argv[1:4])


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def sql_block(text, anchor):
    """The statements of the first ```sql block after `anchor`, comments dropped."""
    at = text.find(anchor)
    if at < 0:
        fail(f"README has no {anchor!r}")
    m = re.compile(r"```sql\n(.*?)```", re.S).search(text, at)
    if not m:
        fail(f"README has no ```sql block after {anchor!r}")
    # The README's queries hold no '--' or ';' inside string literals, so line comments and
    # statements can be cut without a SQL tokenizer.
    body = "\n".join(line.split("--", 1)[0] for line in m.group(1).splitlines())
    return [s.strip() for s in body.split(";") if s.strip()]


def order_keys(sql):
    """The output columns named by the statement's outermost ORDER BY (None when it has none,
    [] when a key is an expression rather than a column, which then orders every column)."""
    depth, last = 0, None
    for i, c in enumerate(sql):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0 and sql[i:i + 8].upper() == "ORDER BY":
            last = i + 8
    if last is None:
        return None
    keys = []
    for key in sql[last:].split(","):
        word = re.sub(r"\s+(ASC|DESC)\s*$", "", key.strip(), flags=re.I)
        if not re.fullmatch(r"\w+", word):
            return []
        keys.append(word.lower())
    return keys


def same_value(a, b):
    """Equal values: strings and nulls exactly, numbers to 1e-9 relative (DuckDB's sum of
    BIGINT is a HUGEINT, Spark's a BIGINT; both read back as Python ints)."""
    num = (int, float, decimal.Decimal)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=0.0)
    return type(a) is type(b) and a == b


def same_rows(xs, ys):
    return len(xs) == len(ys) and all(len(x) == len(y) and all(map(same_value, x, y)) for x, y in zip(xs, ys))


def canonical(row):
    """A sort key that puts rows equal by same_value next to each other."""
    return tuple(("0", "") if v is None else ("1", f"{float(v):.9e}") if isinstance(v, (int, float, decimal.Decimal))
                 else ("2", str(v)) for v in row)


def compare(n, sql, columns, duck, spark):
    """Same rows; in the same order where the query orders them. Rows tied on every ORDER BY
    key may come in any order from either engine, so they are compared as a set."""
    keys = order_keys(sql)
    if keys is None:
        if not same_rows(sorted(duck, key=canonical), sorted(spark, key=canonical)):
            fail(f"query {n}: the engines return different rows\nduckdb: {duck}\nspark:  {spark}")
        return
    idx = [columns.index(k) for k in keys if k in columns] if keys else list(range(len(columns)))
    if len(idx) != len(keys):
        idx = list(range(len(columns)))

    def groups(rows):
        out = []
        for r in rows:
            k = [r[i] for i in idx]
            if out and all(map(same_value, out[-1][0], k)):
                out[-1][1].append(r)
            else:
                out.append((k, [r]))
        return out

    gd, gs = groups(duck), groups(spark)
    ok = len(gd) == len(gs) and all(
        all(map(same_value, kd, ks)) and same_rows(sorted(rd, key=canonical), sorted(rs, key=canonical))
        for (kd, rd), (ks, rs) in zip(gd, gs))
    if not ok:
        fail(f"query {n}: the engines return different rows or order\nduckdb: {duck}\nspark:  {spark}")


duck_sql = sql_block(readme.read_text(), "In DuckDB, with one view per file")
spark_sql = sql_block(readme.read_text(), "The same queries in Spark SQL")
if not duck_sql or len(duck_sql) != len(spark_sql):
    fail(f"README shows {len(duck_sql)} DuckDB and {len(spark_sql)} Spark statements")

# lab_kernels maps each lab directory to its kernel release, read from the lab's own record
# of `uname -a` on that machine (the text traces carry no uname).
lab_kernels = [(d.name, (d / "kernel.txt").read_text().split()[2])
               for d in sorted(lab.iterdir()) if (d / "kernel.txt").is_file()]
tables = sorted(p.stem for p in out.glob("*.parquet"))

con = duckdb.connect()
for t in tables:
    con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{out / t}.parquet')")
con.execute("CREATE TABLE lab_kernels (dir VARCHAR, kernel VARCHAR)")
con.executemany("INSERT INTO lab_kernels VALUES (?, ?)", lab_kernels)

# Two local threads, a small heap, no UI and two shuffle partitions: the tables are a few MB,
# and Spark's defaults (200 partitions, a web UI) would only slow the test down.
# Spark's JVM logs at WARN from its first line, before setLogLevel can quiet it: give it a
# configuration that logs errors only, and bind to loopback (local mode needs no network).
scratch = tempfile.TemporaryDirectory()  # removed when the script exits
log_conf = pathlib.Path(scratch.name) / "log4j2.properties"
log_conf.write_text("rootLogger.level = error\nrootLogger.appenderRef.stderr.ref = console\n"
                    "appender.console.type = Console\nappender.console.name = console\n"
                    "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
                    "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
spark = (SparkSession.builder.master("local[2]").appName("rtsleuth-readme-queries")
         .config("spark.driver.memory", "512m")
         .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_conf.as_uri()}")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.sql.session.timeZone", "UTC")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
for t in tables:
    spark.read.parquet(str(out / f"{t}.parquet")).createOrReplaceTempView(t)
spark.createDataFrame(lab_kernels, "dir STRING, kernel STRING").createOrReplaceTempView("lab_kernels")

answers = []
for n, (dq, sq) in enumerate(zip(duck_sql, spark_sql), 1):
    rel = con.sql(dq)
    columns = [c.lower() for c in rel.columns]
    duck = rel.fetchall()
    df = spark.sql(sq)
    if [c.lower() for c in df.columns] != columns:
        fail(f"query {n}: DuckDB's columns {columns}, Spark's {df.columns}")
    rows = [tuple(r) for r in df.collect()]
    if not duck:
        fail(f"query {n} returns no rows: nothing to compare")
    compare(n, dq, columns, duck, rows)
    print(f"query {n}: {len(duck)} rows of ({', '.join(columns)}) equal in both engines")
    answers.append((columns, duck))
spark.stop()


def answer(columns):
    """The rows of the query with these output columns."""
    hit = [rows for cols, rows in answers if cols == columns]
    if len(hit) != 1:
        fail(f"expected one README query returning {columns}, found {len(hit)}")
    return [dict(zip(columns, r)) for r in hit[0]]


# The lab's truth, from its expected.json files: what each run injected.
runs = [(e.parent, json.loads(e.read_text())) for e in sorted(lab.glob("*/*/expected.json"))]
if not runs:
    fail(f"no expected.json under {lab}")


def event_traces(d):
    return sorted(p for p in d.iterdir() if p.name in ("trace.txt.zst", "trace.dat.zst"))


# 1. Top culprits. The noise module's interrupt handler (hardirq_fire) fires only in the runs
# that injected it, and each of those runs' event traces (text and trace.dat) holds its spike:
# the row counts exactly those traces.
top = answer(["root_cause", "culprit", "traces", "findings", "total_us"])
fired = [d for d, w in runs if w.get("spike") and w.get("function") == "hardirq_fire"]
want = sum(len(event_traces(d)) for d in fired)
row = [r for r in top if r["root_cause"] == "hardirq" and r["culprit"] == "hardirq_fire [rtsleuth_noise]"]
if not fired or not row or row[0]["traces"] != want:
    fail(f"hardirq_fire [rtsleuth_noise]: {row}, but {len(fired)} runs injected it in {want} event traces")
print(f"ok truth: hardirq_fire [rtsleuth_noise] in {want} traces, those of the {len(fired)} runs that fired it")
# And every injected cause has its row, with at least as many traces as runs that injected it
# (a hardirq row names the handler's function, a task row its comm without trailing digits).
injected = {}
for d, w in runs:
    if not w.get("spike"):
        continue
    kind = "unknown" if w.get("provable") is False else w["class"]
    if kind == "hardirq":
        name = w["function"]
    elif kind == "softirq":
        name = "softirq 6 (TASKLET)"
    elif kind in ("black_hole", "unknown"):
        name = "-"
    else:
        comm = w["culprit"].rsplit("-", 1)[0]
        name = comm.rstrip("0123456789") or comm
    injected[(kind, name)] = injected.get((kind, name), 0) + 1
for (kind, name), n in sorted(injected.items()):
    named = lambda c: c == name or (kind == "hardirq" and c.startswith(name + " ["))
    if not any(r["root_cause"] == kind and named(r["culprit"]) and r["traces"] >= n for r in top):
        fail(f"top culprits lack {kind} {name} in at least {n} traces: {top}")
print(f"ok truth: all {len(injected)} injected causes of {sum(injected.values())} spiking runs are there")

# 2. p99 by kernel: one row per lab kernel.
p99 = answer(["kernel", "wakeups", "p99_us"])
if sorted(r["kernel"] for r in p99) != sorted(k for _, k in lab_kernels):
    fail(f"kernels {[r['kernel'] for r in p99]}, the lab's {lab_kernels}")
print(f"ok truth: a p99 for each of the lab's {len(lab_kernels)} kernels")

# 3. Black holes: every stop the trace can prove is there, and the only ones over 10 ms are in
# runs that injected a stop (TCG emulation loses 1-5 ms at random, lab/noise/README.md).
holes = answer(["path", "black_hole_us"])
paths = {r["path"] for r in holes}
stops = {d for d, w in runs if w.get("class") == "black_hole"}
for d in stops:
    w = dict(runs)[d]
    if w.get("provable") is not False and str(d / "trace.txt.zst") not in paths:
        fail(f"{d}: its injected black hole is missing from {sorted(paths)}")
long = {pathlib.Path(r["path"]).relative_to(lab).parts[:2] for r in holes if r["black_hole_us"] > 10_000}
if not long <= {d.relative_to(lab).parts for d in stops}:
    fail(f"black holes over 10 ms in runs {sorted(long)}, injected only in {sorted(map(str, stops))}")
print(f"ok truth: the {len(stops)} injected stops; none over 10 ms elsewhere")

print(f"spark and duckdb agree on {len(answers)} queries")
