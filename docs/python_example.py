"""A notebook's first cells with the rtsleuth Python package: a latency histogram, and the
worst wake-up's timeline stretch by stretch. Run from the repo root (after
`pip install ./crates/rtsleuth-py matplotlib`):

    python docs/python_example.py [TRACE] [OUT.png]

It draws docs/python-example.png from the lab's hardirq run, where an hrtimer callback was
injected in hard-IRQ context; crates/rtsleuth/tests/python_package.rs runs it.
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl

import rtsleuth

trace = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/lab/stock/hardirq/trace.txt.zst"
out = sys.argv[2] if len(sys.argv) > 2 else "docs/python-example.png"

# Wake-up latency per task; the histogram of the real-time threads (prio below 100).
lat = rtsleuth.latency(trace)
rt = lat.tasks().filter(pl.col("prio") < 100).select("pid", "comm")
hist = (lat.histograms().join(rt, on=["pid", "comm"])
        .group_by("lt_us").agg(pl.col("count").sum()).sort("lt_us"))

# The worst wake-up of any task, and its timeline from its due time to when it ran.
explained = rtsleuth.explain(trace, all=True, top=1)
worst = explained.findings().row(0, named=True)
start = worst["expected_ts"] if worst["expected_ts"] is not None else worst["wakeup_ts"]
stretches = explained.stretches().with_columns(
    ((pl.col("start_ts") - start) * 1e6).alias("from_us"),
    ((pl.col("end_ts") - pl.col("start_ts")) * 1e6).alias("us"),
)

fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.6), width_ratios=[1, 1.6])
labels = [f"<{b}" for b in hist["lt_us"]]
left.bar(labels, hist["count"], color="#4a7ab5")
left.set_yscale("log")
left.set_xlabel("wake-up latency (us, log2 buckets)")
left.set_ylabel("wake-ups")
left.set_title("real-time threads: latency histogram")
left.tick_params(axis="x", labelrotation=60, labelsize=7)

colours = {"hardirq": "#d62728", "softirq": "#ff7f0e", "black_hole": "#7f7f7f",
           "kernel_path": "#2ca02c", "unknown": "#c7c7c7", "higher_priority": "#9467bd",
           "fair_share": "#8c564b", "preempt_off": "#e377c2", "irqs_off": "#bcbd22"}
kinds = stretches["kind"].unique(maintain_order=True).to_list()
for row in stretches.iter_rows(named=True):
    right.barh(kinds.index(row["kind"]), row["us"], left=row["from_us"],
               color=colours.get(row["kind"], "#17becf"))
longest = stretches.sort("us", descending=True).row(0, named=True)
if longest["culprit"]:
    right.text(longest["from_us"] + longest["us"] / 2, kinds.index(longest["kind"]),
               longest["culprit"], ha="center", va="center", color="white", fontsize=9)
right.set_yticks(range(len(kinds)), kinds)
right.invert_yaxis()
right.set_xlabel("us after it was due")
right.set_title(f"worst wake-up: {worst['comm']}-{worst['pid']}, {worst['latency_us']:.0f} us, "
                f"root cause {worst['root_cause']}")
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"{out}: {hist['count'].sum()} real-time wake-ups; worst {worst['latency_us']} us "
      f"({worst['root_cause']}), {stretches.height} stretches")
