"""rtsleuth for notebooks: why a real-time Linux thread was late, as polars DataFrames.

Each function reads a trace (ftrace text, trace.dat, perf.data, Perfetto, compressed or not)
with rtsleuth's Rust analyses, the same code as the CLI, and returns a result whose tables are
polars DataFrames (``.to_pandas()`` for pandas). ``result.json`` is the document
``rtsleuth CMD --json`` prints, field for field; the DataFrames are its rows, flattened.

    >>> import rtsleuth
    >>> r = rtsleuth.explain("trace.dat", all=True, top=20)
    >>> r.findings()      # one row per late wake-up, worst first
    >>> r.stretches()     # each finding's timeline, stretch by stretch
    >>> rtsleuth.latency("trace.dat").histograms()

A trace rtsleuth cannot read raises ``rtsleuth.TraceError`` with the CLI's message.
"""

import json

import polars as pl

from rtsleuth import _native
from rtsleuth._native import TraceError

__all__ = ["explain", "latency", "stats", "irq", "wq", "TraceError",
           "Document", "Explained", "Latencies", "Stats", "Interrupts", "Workqueues"]


def _frame(rows, columns=None):
    """A DataFrame of dict rows, every row read for the types (a column's first values may
    be null); ``columns`` fixes the order and keeps the columns of an empty table."""
    if not rows:
        return pl.DataFrame(schema=columns or [])
    frame = pl.DataFrame(rows, infer_schema_length=None)
    return frame.select(columns) if columns else frame


class Document:
    """An analysis' JSON document (``.json``) and its tables."""

    def __init__(self, text):
        self.json = json.loads(text)

    @property
    def warnings(self):
        """What makes the numbers less than certain, as the CLI prints after its report."""
        return list(self.json.get("warnings", []))

    def table(self, key):
        """Any list of rows of the document (``"tasks"``, ``"softirqs"``, ...) as a DataFrame."""
        return _frame(self.json.get(key) or [])


FINDING_COLUMNS = ["finding", "comm", "pid", "prio", "cpu", "latency_us", "root_cause",
                   "source", "expected_ts", "wakeup_ts", "wake_end_ts", "run_ts",
                   "waker_cpu", "due", "run_at", "summary"]
STRETCH_COLUMNS = ["finding", "seq", "kind", "phase", "cpu", "start_ts", "end_ts",
                   "culprit", "culprit_pid", "detail"]
COMPONENT_COLUMNS = ["finding", "kind", "phase", "cpu", "culprit", "culprit_pid", "us",
                     "start_ts", "end_ts", "detail"]


class Explained(Document):
    """``rtsleuth explain``: findings (worst first), their stretches and components, and
    with a threshold the causes summed over every spike (``aggregate``)."""

    def findings(self):
        """One row per finding; ``finding`` is its rank, 1 the worst (the key of the other
        tables). The task's comm, pid and prio are columns of their own."""
        rows = []
        for rank, f in enumerate(self.json["findings"], start=1):
            row = {k: v for k, v in f.items()
                   if k not in ("task", "timeline", "components", "chain")}
            row.update(finding=rank, comm=f["task"]["comm"], pid=f["task"]["pid"],
                       prio=f["task"]["prio"])
            rows.append(row)
        return _frame(rows, FINDING_COLUMNS)

    def stretches(self):
        """Each finding's timeline: consecutive stretches from its due time to when it ran,
        ``seq`` counting from 0."""
        return self._parts("timeline", STRETCH_COLUMNS, seq=True)

    def components(self):
        """Each finding's time per (kind, culprit): what its root cause is summed from."""
        return self._parts("components", COMPONENT_COLUMNS, seq=False)

    def aggregate(self):
        """Per (kind, culprit): spikes, total and max time, largest total first; over every
        wake-up at least ``threshold_us`` late when given, else over the findings reported."""
        return _frame(self.json.get("aggregate") or [],
                      ["kind", "culprit", "spikes", "total_us", "max_us"])

    def targets(self):
        """The tasks explained: wake-ups seen and spikes found per task."""
        return self.table("targets")

    def _parts(self, key, columns, seq):
        rows = []
        for rank, f in enumerate(self.json["findings"], start=1):
            for i, part in enumerate(f[key]):
                row = dict(part, finding=rank)
                if seq:
                    row["seq"] = i
                rows.append(row)
        return _frame(rows, columns)


class Latencies(Document):
    """``rtsleuth latency``: wake-up latency per task, and each task's histogram."""

    def tasks(self):
        """One row per task: the CLI's latency table (its rows, its figures)."""
        rows = [{k: v for k, v in t.items() if k != "histogram"} for t in self.json["tasks"]]
        return _frame(rows)

    def histograms(self):
        """One row per task per log2 bucket: wake-ups under ``lt_us`` (and at or above the
        bucket before), as ``latency --hist`` draws them."""
        rows = [dict(comm=t["comm"], pid=t["pid"], lt_us=b["lt_us"], count=b["count"])
                for t in self.json["tasks"] for b in t.get("histogram") or []]
        return _frame(rows, ["comm", "pid", "lt_us", "count"])

    def histogram(self):
        """The histogram of every selected task's wake-ups together."""
        return _frame(self.json.get("histogram") or [], ["lt_us", "count"])

    def preemption(self):
        """Per task: waits from a switch-out while still runnable to the next switch-in."""
        return _frame(self.json["preemption"]["tasks"])


class Stats(Document):
    """``rtsleuth stats``: what the trace holds."""

    def per_cpu(self):
        """Per CPU: events, first and last timestamps, where its history starts, lost events."""
        return self.table("per_cpu")

    def per_event(self):
        """Events per event name."""
        counts = self.json["per_event"]
        return _frame([{"event": k, "count": v} for k, v in counts.items()], ["event", "count"])

    def tasks(self):
        """Events per task."""
        return self.table("tasks")


class Interrupts(Document):
    """``rtsleuth irq``: handler times per interrupt, softirq, hrtimer callback and vector."""

    def hardirqs(self):
        return self.table("hardirqs")

    def softirqs(self):
        return self.table("softirqs")

    def hrtimers(self):
        return self.table("hrtimers")

    def vectors(self):
        return self.table("vectors")


class Workqueues(Document):
    """``rtsleuth wq``: how long works waited for a kworker and ran."""

    def functions(self):
        return self.table("functions")

    def workqueues(self):
        return self.table("workqueues")

    def kworkers(self):
        return self.table("kworkers")

    def worst_wait(self):
        return self.table("worst_wait")

    def worst_exec(self):
        return self.table("worst_exec")


def explain(path, all=False, top=5, threshold_us=None, pids=None, tasks=None,
            preemptions=False, due=None):
    """What made each of the worst wake-ups late (``rtsleuth explain``). By default
    real-time tasks only; ``all=True`` every task; ``pids``/``tasks`` narrow to pids or
    comm substrings; ``threshold_us`` explains every wake-up at least that late; ``due``
    (trace-clock seconds) only the wake-up due then, within 20 us (``--due``)."""
    return Explained(_native.explain(str(path), all, top, threshold_us, pids, tasks,
                                     preemptions, due))


def latency(path, pids=None, tasks=None, rt_only=False):
    """Wake-up latency per task (``rtsleuth latency --hist``)."""
    return Latencies(_native.latency(str(path), pids, tasks, rt_only))


def stats(path):
    """What the trace holds (``rtsleuth stats``)."""
    return Stats(_native.stats(str(path)))


def irq(path, cpu=None, top=10, late_us=100.0):
    """Interrupt handler times (``rtsleuth irq``)."""
    return Interrupts(_native.irq(str(path), cpu, top, late_us))


def wq(path, top=10):
    """Workqueue waits and executions (``rtsleuth wq``)."""
    return Workqueues(_native.wq(str(path), top))
