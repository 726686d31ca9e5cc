//! Hand-written JSON for [`Expected`] (no serde dependency).

use std::fmt::Write as _;

use crate::truth::Expected;

fn escape(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Serializes the ground truth as a JSON object:
/// `{"cpus","has_waking","lost_events","event_lines","other_lines","bytes",
/// "samples_truncated","events":{name:count},"tasks":[{"pid","comm","prio",
/// "count","sum_ns","max_ns","max_at_ns","runtime_ns","switches",
/// "samples_ns":[..]}]}`.
pub fn expected_to_json(e: &Expected) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "{{\n  \"cpus\": {},\n  \"has_waking\": {},\n  \"lost_events\": {},\n  \"event_lines\": {},\n  \"other_lines\": {},\n  \"bytes\": {},\n  \"samples_truncated\": {},\n  \"events\": {{",
        e.cpus, e.has_waking, e.lost_events, e.event_lines, e.other_lines, e.bytes, e.samples_truncated
    );
    for (i, (k, v)) in e.events.iter().enumerate() {
        o.push_str(if i == 0 { "\n    " } else { ",\n    " });
        escape(k, &mut o);
        let _ = write!(o, ": {v}");
    }
    o.push_str("\n  },\n  \"tasks\": [");
    for (i, t) in e.tasks.iter().enumerate() {
        o.push_str(if i == 0 { "\n    {" } else { ",\n    {" });
        let _ = write!(o, "\"pid\": {}, \"comm\": ", t.pid);
        escape(&t.comm, &mut o);
        let _ = write!(
            o,
            ", \"prio\": {}, \"count\": {}, \"sum_ns\": {}, \"max_ns\": {}, \"max_at_ns\": {}, \"runtime_ns\": {}, \"switches\": {}, \"samples_ns\": [",
            t.prio, t.count, t.sum_ns, t.max_ns, t.max_at_ns, t.runtime_ns, t.switches
        );
        for (j, s) in t.samples_ns.iter().enumerate() {
            if j > 0 {
                o.push_str(", ");
            }
            let _ = write!(o, "{s}");
        }
        o.push_str("]}");
    }
    o.push_str("\n  ]\n}\n");
    o
}
