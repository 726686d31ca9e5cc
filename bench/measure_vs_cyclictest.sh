#!/usr/bin/env bash
# rtsleuth measure against cyclictest on this machine, same settings, back to back.
#
# Both run one SCHED_FIFO thread per CPU of $CPUS at the same priority, every $INTERVAL us,
# absolute clock_nanosleep, memory locked, /dev/cpu_dma_latency at 0, for $SECS seconds,
# $ROUNDS rounds, alternating which goes first so that drift in the machine's noise hits both.
# cyclictest: -m -q -p -i -d0 -D -t N -a CPUS --histogram=HMAX --histfile (its -h forces equal
# priorities and distance 0, which is also measure's default). Per CPU it prints min / avg /
# p99 / max for each tool and the ratio of the averages, per round and over all rounds.
#
# cyclictest truncates each sample to whole microseconds and prints its average as a whole
# number, so its avg sits up to 1.5 us below a nanosecond average of the same wake-ups; its p99
# here is the nearest rank over its per-us histogram (overflows count as above HMAX). The last
# lines compare like for like: p1, p50 and the mean of both tools' per-us histograms (the
# same floor), averaged over the rounds; min and max are single extreme samples, which this
# VM's noise moves by microseconds either way from round to round.
#
# Needs root, cyclictest (rt-tests) and python3. Env: ROUNDS (3), SECS (10), CPUS (online),
# INTERVAL (1000), PRIO (80), HMAX (10000), RTSLEUTH (target/release/rtsleuth, built if absent).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
SECS=${SECS:-10}
CPUS=${CPUS:-$(cat /sys/devices/system/cpu/online)}
INTERVAL=${INTERVAL:-1000}
PRIO=${PRIO:-80}
HMAX=${HMAX:-10000}
RTSLEUTH=${RTSLEUTH:-target/release/rtsleuth}

command -v cyclictest > /dev/null || { echo "cyclictest not found (apt-get install rt-tests)" >&2; exit 1; }
[ -x "$RTSLEUTH" ] || cargo build --release -p rtsleuth
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nthreads=$("$RTSLEUTH" measure -a "$CPUS" -l 1 -i 1000 -q --json |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["threads"]))')

run_cyclictest() {
    cyclictest -m -q -p"$PRIO" -i"$INTERVAL" -d0 -D"$SECS" -t "$nthreads" -a "$CPUS" \
        --histogram="$HMAX" --histfile="$work/ct.$1" > /dev/null 2> "$work/ct.err" ||
        { cat "$work/ct.err" >&2; exit 1; }
}

run_rtsleuth() {
    "$RTSLEUTH" measure -q --json -p "$PRIO" -i "$INTERVAL" -D "$SECS" -a "$CPUS" \
        -h "$HMAX" > "$work/rs.$1" 2> "$work/rs.err" || { cat "$work/rs.err" >&2; exit 1; }
}

for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then
        run_cyclictest "$round"; run_rtsleuth "$round"
    else
        run_rtsleuth "$round"; run_cyclictest "$round"
    fi
done

python3 - "$work" "$ROUNDS" "$CPUS" <<'PY'
import json, sys

work, rounds, cpus = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def pct(counts, overflows, q):
    """Nearest-rank q-th percentile of a per-us histogram; None when it lands in overflow."""
    total = sum(counts) + overflows
    rank = max(1, -(-q * total // 100))
    seen = 0
    for us, c in enumerate(counts):
        seen += c
        if seen >= rank:
            return us
    return None

def shape(counts, overflows):
    """(p1, p50, mean) of a per-us histogram: both tools' samples floored to the same whole
    microsecond, so these compare like for like (the mean leaves overflows out)."""
    n = sum(counts)
    mean = sum(us * c for us, c in enumerate(counts)) / n if n else float("nan")
    return pct(counts, overflows, 1), pct(counts, overflows, 50), mean

def cyclictest(path):
    """Per thread: (min, avg, p99, max, cycles) from cyclictest's --histfile."""
    rows, meta = [], {}
    for line in open(path):
        if line.startswith("# ") and ":" in line:
            key, _, vals = line[2:].partition(":")
            meta[key] = [int(v) for v in vals.split()] if vals.split() and vals.split()[0].isdigit() else []
        elif line.strip() and not line.startswith("#"):
            rows.append([int(v) for v in line.split()[1:]])
    out = []
    for t in range(len(meta["Min Latencies"])):
        counts = [r[t] for r in rows]
        over = meta["Histogram Overflows"][t]
        out.append((meta["Min Latencies"][t], meta["Avg Latencies"][t], pct(counts, over, 99),
                    meta["Max Latencies"][t], sum(counts) + over) + shape(counts, over))
    return out

def rtsleuth(path):
    doc = json.load(open(path))
    return [(t["min_us"], t["avg_us"], t["p99_us"], t["max_us"], t["cycles"])
            + shape(t["histogram"]["counts"], t["histogram"]["overflows"]) for t in doc["threads"]]

def fmt(v):
    return ">hmax" if v is None else f"{v:g}"

print(f"cyclictest vs rtsleuth measure, CPUs {cpus}, {rounds} round(s); us")
print(f"{'round':>5} {'T':>2}  {'ct min':>7} {'ct avg':>7} {'ct p99':>7} {'ct max':>7} {'ct cyc':>7}"
      f"  {'rs min':>7} {'rs avg':>7} {'rs p99':>7} {'rs max':>8} {'rs cyc':>7}  {'avg rs/ct':>9}")
sums = {}
for r in range(1, rounds + 1):
    ct, rs = cyclictest(f"{work}/ct.{r}"), rtsleuth(f"{work}/rs.{r}")
    for t, (c, s) in enumerate(zip(ct, rs)):
        acc = sums.setdefault(t, [[], []])
        acc[0].append(c[5:]); acc[1].append(s[5:])
        print(f"{r:>5} {t:>2}  " + " ".join(f"{fmt(v):>7}" for v in c[:5]) + "  "
              + " ".join(f"{fmt(v):>7}" for v in s[:3]) + f" {fmt(s[3]):>8} {s[4]:>7}"
              + f"  {s[1] / c[1] if c[1] else float('nan'):>9.2f}")
# ct avg is printed by cyclictest as a whole number and each sample truncated to a whole us:
# like for like, both tools' per-us histograms (same floor) give p1, p50 and the mean.
print("from both histograms, floored to whole us (means over rounds):")
for t, (c, s) in sums.items():
    m = lambda rows, i: sum(r[i] for r in rows if r[i] is not None) / len(rows)
    print(f"thread {t}: p1 cyclictest {m(c, 0):.2f} rtsleuth {m(s, 0):.2f}; "
          f"p50 {m(c, 1):.2f} vs {m(s, 1):.2f}; mean {m(c, 2):.2f} vs {m(s, 2):.2f}, "
          f"ratio {m(s, 2) / m(c, 2):.3f}")
PY
