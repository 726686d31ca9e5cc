#!/usr/bin/env python3
"""Checks a Perfetto trace against Perfetto's own protos and counts its ftrace events.

Usage: bench/perfetto_shape.py TRACE [STATS_JSON]

Reads TRACE packet by packet with the Python classes Perfetto generates from its protos
(PyPI `perfetto`: perfetto.protos.perfetto.trace.perfetto_trace_pb2), and fails when

- a packet does not parse, or any message in the first 2000 packets carries a field the
  protos do not know (a wrong field number or wire type in a writer shows up as one);
- a CompactSched's columns differ in length, or a comm index is past its intern table;
- a CPU's switch or waking times (delta-coded per bundle) or its ordinary events go back
  in time from one bundle to the next;
- an hrtimer function iid is not in the sequence's interned kernel_symbols.

It prints the event counts per name as JSON (compact rows counted as sched_switch and
sched_waking). With STATS_JSON (the output of `rtsleuth stats --json TRACE`) it also fails
unless rtsleuth's `events` and `per_event` are the same counts.

The strict checks are for generated files: real traces written by other Perfetto versions
may carry fields these protos do not know (the Android traces of ../shared/fixtures/realworld/
have TracePacket field 76), though their counts still compare (all three agree with rtsleuth).

Perfetto's trace processor (`from perfetto.trace_processor import TraceProcessor`) would be
the stronger check, but it downloads its shell binary at run time, from a host outside the
package registries (not reachable on the development VM); the proto classes come with the
package.
"""
import collections
import json
import sys

from google.protobuf import unknown_fields
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

DEEP_CHECK_PACKETS = 2000


def varint(buf, pos):
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def packets(path):
    with open(path, "rb") as f:
        buf = f.read()
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        if key != 0x0A:
            raise SystemExit(f"{path}: byte {pos}: key {key:#x}, not a TracePacket")
        n, pos = varint(buf, pos)
        if pos + n > len(buf):
            raise SystemExit(f"{path}: the last packet is cut short")
        yield buf[pos:pos + n]
        pos += n


def unknown(msg, where):
    """Paths of fields the protos do not know, in msg and every message below it."""
    bad = []
    if len(unknown_fields.UnknownFieldSet(msg)):
        bad.append(where)
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        for i, m in enumerate(items):
            bad += unknown(m, f"{where}.{field.name}[{i}]")
    return bad


def main():
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    path = sys.argv[1]
    counts = collections.Counter()
    last = {}  # (cpu, column) -> last absolute time
    symbols = collections.defaultdict(set)
    problems = []
    n_packets = 0
    for raw in packets(path):
        p = TracePacket.FromString(raw)
        if n_packets < DEEP_CHECK_PACKETS:
            problems += unknown(p, f"packet {n_packets}")
        n_packets += 1
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & 1:
            symbols[seq] = set()
        for s in p.interned_data.kernel_symbols:
            symbols[seq].add(s.iid)
        if not p.HasField("ftrace_events"):
            continue
        b = p.ftrace_events
        cpu = b.cpu
        cs = b.compact_sched
        for column, cols in (
            ("switch", (cs.switch_timestamp, cs.switch_prev_state, cs.switch_next_pid,
                        cs.switch_next_prio, cs.switch_next_comm_index)),
            ("waking", (cs.waking_timestamp, cs.waking_pid, cs.waking_target_cpu,
                        cs.waking_prio, cs.waking_comm_index)),
        ):
            if len({len(c) for c in cols}) > 1:
                problems.append(f"packet {n_packets - 1}: {column} columns of unequal length")
            if any(i >= len(cs.intern_table) for i in cols[4]):
                problems.append(f"packet {n_packets - 1}: {column} comm index past the intern table")
            ts = 0
            for i, d in enumerate(cols[0]):
                ts += d
                if i == 0 and ts < last.get((cpu, column), 0):
                    problems.append(f"packet {n_packets - 1}: CPU {cpu} {column} goes back in time")
            if cols[0]:
                last[(cpu, column)] = ts
            counts["sched_" + column] += len(cols[0])
        prev = last.get((cpu, "event"), 0)
        for ev in b.event:
            name = ev.WhichOneof("event")
            counts[name] += 1
            if ev.timestamp < prev:
                problems.append(f"packet {n_packets - 1}: CPU {cpu} events go back in time")
            prev = ev.timestamp
            if name in ("hrtimer_start", "hrtimer_expire_entry"):
                iid = getattr(ev, name).function
                if iid not in symbols[seq]:
                    problems.append(f"packet {n_packets - 1}: hrtimer function iid {iid} not interned")
        last[(cpu, "event")] = prev
    counts = {k: v for k, v in sorted(counts.items()) if v}
    total = sum(counts.values())
    print(json.dumps({"packets": n_packets, "events": total, "per_event": counts}, indent=1))
    if len(sys.argv) == 3:
        with open(sys.argv[2]) as f:
            stats = json.load(f)
        if stats["events"] != total or stats["per_event"] != counts:
            problems.append(
                f"rtsleuth stats counts {stats['events']} events {stats['per_event']}, "
                f"Perfetto's protos {total} {counts}")
        else:
            print(f"rtsleuth stats agrees: {total} events, the same count per event name")
    if problems:
        for p in problems[:20]:
            print("problem:", p, file=sys.stderr)
        raise SystemExit(f"{len(problems)} problems")


if __name__ == "__main__":
    main()
