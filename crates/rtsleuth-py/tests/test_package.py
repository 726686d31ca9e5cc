"""The Python package against the CLI: every DataFrame row is the CLI's JSON row, field for
field, and errors carry the CLI's message. Run by crates/rtsleuth/tests/python_package.rs in
a fresh venv with the package installed; RTSLEUTH names the CLI binary, LAB_RUN a trace.

The expected values come from the CLI's JSON (`rtsleuth CMD --json`), read here with the
standard library only: the package's DataFrames are compared with it, not with themselves.
"""

import faulthandler
import json
import os
import subprocess
import tempfile
import threading
import unittest

import polars as pl

import rtsleuth

CLI = os.environ["RTSLEUTH"]
TRACE = os.environ["LAB_RUN"]


def cli_json(*args):
    out = subprocess.run([CLI, *args, "--json", TRACE], check=True, capture_output=True)
    return json.loads(out.stdout)


def rows(frame):
    return frame.to_dicts()


def same(a, b):
    """Equal, with a float of the DataFrame equal to the JSON's integer-valued number."""
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and float(a) == float(b)
    return a == b


class ExplainMatchesCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cli = cli_json("explain", "--all", "--top", "20")
        cls.py = rtsleuth.explain(TRACE, all=True, top=20)

    def test_the_document_is_the_clis(self):
        self.assertEqual(self.py.json, self.cli)

    def test_findings_row_for_row(self):
        frame = self.py.findings()
        self.assertEqual(frame.height, len(self.cli["findings"]))
        self.assertGreater(frame.height, 0)
        for rank, (row, f) in enumerate(zip(rows(frame), self.cli["findings"]), start=1):
            self.assertEqual(row["finding"], rank)
            self.assertEqual((row["comm"], row["pid"], row["prio"]),
                             (f["task"]["comm"], f["task"]["pid"], f["task"]["prio"]))
            for key in ("cpu", "latency_us", "root_cause", "source", "expected_ts",
                        "wakeup_ts", "wake_end_ts", "run_ts", "waker_cpu", "due", "run_at",
                        "summary"):
                self.assertTrue(same(row[key], f[key]), (rank, key, row[key], f[key]))

    def test_stretches_are_the_timelines(self):
        expected = [(rank, seq, s) for rank, f in enumerate(self.cli["findings"], start=1)
                    for seq, s in enumerate(f["timeline"])]
        got = rows(self.py.stretches())
        self.assertEqual(len(got), len(expected))
        for row, (rank, seq, s) in zip(got, expected):
            self.assertEqual((row["finding"], row["seq"]), (rank, seq))
            for key in ("kind", "phase", "cpu", "start_ts", "end_ts", "culprit",
                        "culprit_pid", "detail"):
                self.assertTrue(same(row[key], s[key]), (rank, seq, key))

    def test_components_and_aggregate(self):
        expected = [c for f in self.cli["findings"] for c in f["components"]]
        got = rows(self.py.components())
        self.assertEqual(len(got), len(expected))
        for row, c in zip(got, expected):
            self.assertTrue(all(same(row[k], c[k]) for k in c), (row, c))
        aggregate = rows(self.py.aggregate())
        self.assertEqual(len(aggregate), len(self.cli["aggregate"]))
        for row, a in zip(aggregate, self.cli["aggregate"]):
            self.assertTrue(all(same(row[k], a[k]) for k in a), (row, a))

    def test_the_injected_culprit_leads_the_aggregate(self):
        # The lab injected an hrtimer callback in hard-IRQ context (the fixture's README).
        hardirq = self.py.aggregate().filter(pl.col("kind") == "hardirq")
        self.assertIn("hardirq_fire [rtsleuth_noise]", hardirq["culprit"].to_list())

    def test_options_are_the_clis(self):
        cli = cli_json("explain", "--threshold", "1000", "--task", "cyclictest")
        py = rtsleuth.explain(TRACE, threshold_us=1000, tasks=["cyclictest"])
        self.assertEqual(py.json, cli)

    def test_a_due_time_is_the_clis(self):
        # A timer's wake-up other than the worst, asked for by its task and due time, is
        # the one finding.
        timed = [f for f in self.cli["findings"] if f["source"] == "timer"]
        due, pid = timed[1]["expected_ts"], timed[1]["task"]["pid"]
        cli = cli_json("explain", "--pid", str(pid), "--due", f"{due:.9f}")
        self.assertEqual(len(cli["findings"]), 1)
        self.assertEqual(cli["findings"][0]["expected_ts"], due)
        self.assertEqual(rtsleuth.explain(TRACE, pids=[pid], due=due).json, cli)
        for bad in (-1.0, float("nan"), float("inf")):
            with self.assertRaisesRegex(ValueError, "is not a time in seconds"):
                rtsleuth.explain(TRACE, due=bad)


class LatencyMatchesCli(unittest.TestCase):
    def test_tasks_row_for_row(self):
        cli = cli_json("latency")
        frame = rtsleuth.latency(TRACE).tasks()
        self.assertEqual(frame.height, len(cli["tasks"]))
        for row, t in zip(rows(frame), cli["tasks"]):
            self.assertEqual(set(row), set(t))
            self.assertTrue(all(same(row[k], t[k]) for k in t), (row, t))

    def test_histograms_hold_every_wake_up(self):
        cli = cli_json("latency", "--hist")
        lat = rtsleuth.latency(TRACE)
        per_task = lat.histograms().group_by("pid").agg(pl.col("count").sum())
        wakeups = {t["pid"]: t["wakeups"] for t in cli["tasks"]}
        for pid, count in per_task.iter_rows():
            self.assertEqual(count, wakeups[pid])
        self.assertEqual(rows(lat.histogram()), cli["histogram"])


class OtherCommands(unittest.TestCase):
    def test_stats_irq_wq_are_the_clis(self):
        self.assertEqual(rtsleuth.stats(TRACE).json, cli_json("stats"))
        irq = rtsleuth.irq(TRACE)
        self.assertEqual(irq.json, cli_json("irq"))
        self.assertEqual(rows(irq.softirqs()), cli_json("irq")["softirqs"])
        wq = rtsleuth.wq(TRACE)
        self.assertEqual(wq.json, cli_json("wq"))
        self.assertEqual(wq.functions().height, len(wq.json["functions"]))
        per_event = rtsleuth.stats(TRACE).per_event()
        self.assertEqual(per_event["count"].sum(), cli_json("stats")["events"])


class Errors(unittest.TestCase):
    def test_the_message_is_the_clis(self):
        for bad in ("/nonexistent/trace.dat", __file__):
            out = subprocess.run([CLI, "explain", bad], capture_output=True, text=True)
            self.assertNotEqual(out.returncode, 0)
            with self.assertRaises(rtsleuth.TraceError) as caught:
                rtsleuth.explain(bad)
            self.assertEqual("rtsleuth: " + str(caught.exception), out.stderr.strip())

    def test_conflicting_options(self):
        with self.assertRaises(ValueError):
            rtsleuth.explain(TRACE, all=True, pids=[1])


class Gil(unittest.TestCase):
    def test_reading_releases_the_interpreter(self):
        # The read blocks on a FIFO that only this thread fills: were the interpreter held
        # while reading, this thread could never write, and the watchdog (which needs no
        # interpreter) would end the run as a failure instead of a hang.
        faulthandler.dump_traceback_later(120, exit=True)
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "trace")
            os.mkfifo(fifo)
            got = {}
            reader = threading.Thread(target=lambda: got.update(doc=rtsleuth.latency(fifo)))
            reader.start()
            with open(fifo, "wb") as w, open(TRACE, "rb") as r:
                w.write(r.read())
            reader.join()
        faulthandler.cancel_dump_traceback_later()
        self.assertEqual(got["doc"].json["tasks"], rtsleuth.latency(TRACE).json["tasks"])


if __name__ == "__main__":
    unittest.main()
