//! The typed decoding of an event (`EventKind`) as `(field, value)` pairs, for tests that
//! compare it with what another tool printed: task states as ftrace's letters, CPUs as
//! numbers ("none" when absent).

use rtsleuth_trace::event::EventKind;

pub fn typed(kind: &EventKind<'_>) -> Vec<(&'static str, String)> {
    let s = |x: &str| x.to_string();
    match *kind {
        EventKind::SchedSwitch {
            prev_comm,
            prev_pid,
            prev_prio,
            prev_state,
            next_comm,
            next_pid,
            next_prio,
        } => vec![
            ("prev_comm", s(prev_comm)),
            ("prev_pid", prev_pid.to_string()),
            ("prev_prio", prev_prio.map_or("?".into(), |p| p.to_string())),
            ("prev_state", prev_state.letter().into()),
            ("next_comm", s(next_comm)),
            ("next_pid", next_pid.to_string()),
            ("next_prio", next_prio.map_or("?".into(), |p| p.to_string())),
        ],
        EventKind::SchedWaking {
            comm,
            pid,
            prio,
            target_cpu,
        }
        | EventKind::SchedWakeup {
            comm,
            pid,
            prio,
            target_cpu,
        }
        | EventKind::SchedWakeupNew {
            comm,
            pid,
            prio,
            target_cpu,
        } => vec![
            ("comm", s(comm)),
            ("pid", pid.to_string()),
            ("prio", prio.to_string()),
            (
                "target_cpu",
                target_cpu.map_or("none".into(), |c| c.to_string()),
            ),
        ],
        EventKind::Function { function, parent } => {
            vec![("function", s(function)), ("parent", s(parent))]
        }
        EventKind::Marker { kind, text } => {
            vec![("marker", format!("{kind:?}")), ("text", s(text))]
        }
        EventKind::SysEnter { nr } => vec![("nr", nr.to_string())],
        EventKind::SysExit { nr, ret } => vec![("nr", nr.to_string()), ("ret", ret.to_string())],
        EventKind::IrqHandlerEntry { irq, name } => {
            vec![("irq", irq.to_string()), ("name", s(name))]
        }
        EventKind::IrqHandlerExit { irq, handled } => {
            vec![("irq", irq.to_string()), ("handled", handled.to_string())]
        }
        EventKind::HrtimerStart { function, .. }
        | EventKind::HrtimerExpireEntry { function, .. } => {
            vec![("function", s(function))]
        }
        _ => Vec::new(),
    }
}
