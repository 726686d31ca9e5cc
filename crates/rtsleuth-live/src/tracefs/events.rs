//! Which events a job enables: named presets for latency work, or explicit `system:event`s,
//! checked against what this kernel offers before anything is written.

use crate::LiveError;
use std::collections::BTreeSet;
use std::path::Path;

/// The groups `explain` draws on: who ran (sched), who interrupted (irq, timer, and the kind of
/// interrupt: x86's irq_vectors, ARM's IPI kinds), deferred work (workqueue) and, on kernels
/// built with them, irqs/preempt-off sections. A group is a system or one `system:event`.
pub(super) const LATENCY: &[&str] = &[
    "sched",
    "irq",
    "timer",
    "irq_vectors",
    "ipi:ipi_entry",
    "ipi:ipi_exit",
    "workqueue",
    "preemptirq",
];
const IRQ: &[&str] = &[
    "irq",
    "irq_vectors",
    "ipi:ipi_entry",
    "ipi:ipi_exit",
    "timer",
    "preemptirq",
];
/// What names an interrupt's kind, by architecture: x86's vectors, ARM's `ipi_entry` inside
/// the one `IPI` handler. A kernel has one or the other; only having neither is worth a note.
const INTERRUPT_KINDS: &[&str] = &["irq_vectors", "ipi:ipi_entry", "ipi:ipi_exit"];
const SCHED: &[&str] = &["sched"];
/// Groups every preset needs: without them there is nothing to measure.
const REQUIRED: &[&str] = &["sched"];

/// The events of the kernel, as `available_events` lists them (`system:event`).
pub struct AvailableEvents(BTreeSet<(String, String)>);

impl AvailableEvents {
    /// Reads `available_events` of a tracefs directory.
    pub fn read(dir: &Path) -> Result<AvailableEvents, LiveError> {
        let path = dir.join("available_events");
        let text = std::fs::read_to_string(&path).map_err(|e| LiveError::file(&path, e))?;
        Ok(Self::parse(&text))
    }

    /// Parses the `system:event` lines of `available_events`.
    pub fn parse(text: &str) -> AvailableEvents {
        AvailableEvents(
            text.lines()
                .filter_map(|l| l.trim().split_once(':'))
                .map(|(s, e)| (s.to_owned(), e.to_owned()))
                .collect(),
        )
    }

    /// Whether the kernel has any event of `system`.
    pub fn has_system(&self, system: &str) -> bool {
        self.0
            .range((system.to_owned(), String::new())..)
            .next()
            .is_some_and(|(s, _)| s == system)
    }

    fn has_event(&self, system: &str, event: &str) -> bool {
        self.0.contains(&(system.to_owned(), event.to_owned()))
    }

    /// Whether the kernel has this `system:event`.
    pub fn contains(&self, event: &str) -> bool {
        event
            .split_once(':')
            .is_some_and(|(system, name)| self.has_event(system, name))
    }

    /// Turns `-e` arguments (presets `latency`, `sched`, `irq`, `all`; `system`; `system:event`;
    /// `system:*`) into `set_event` lines. Preset groups this kernel lacks are left out and
    /// named in the returned notes; an explicit event it lacks is an error.
    pub fn resolve(&self, specs: &[String]) -> Result<(Vec<String>, Vec<String>), LiveError> {
        let mut lines = Vec::new();
        let mut notes = Vec::new();
        for spec in specs {
            let groups = match spec.as_str() {
                "all" => {
                    lines.push("*:*".to_owned());
                    continue;
                }
                "latency" => LATENCY,
                "irq" => IRQ,
                "sched" => SCHED,
                _ => {
                    lines.push(self.explicit(spec)?);
                    continue;
                }
            };
            for group in groups {
                if let Some(line) = self.group_line(group) {
                    lines.push(line);
                } else if REQUIRED.contains(group) {
                    return Err(LiveError::Unsupported(format!(
                        "this kernel has no {group} events"
                    )));
                } else if !INTERRUPT_KINDS.contains(group) {
                    notes.push(format!("preset {spec}: this kernel has no {group} events"));
                }
            }
            if !INTERRUPT_KINDS.iter().any(|g| self.group_line(g).is_some()) {
                notes.push(format!(
                    "preset {spec}: this kernel has neither irq_vectors (x86) nor ipi_entry/ipi_exit (ARM) events: interrupts are named by handler only"
                ));
            }
        }
        lines.dedup();
        Ok((lines, notes))
    }

    /// The `set_event` line of a preset's group, when this kernel has it.
    fn group_line(&self, group: &str) -> Option<String> {
        match group.split_once(':') {
            Some((system, event)) => self.has_event(system, event).then(|| group.to_owned()),
            None => self.has_system(group).then(|| format!("{group}:*")),
        }
    }

    fn explicit(&self, spec: &str) -> Result<String, LiveError> {
        let (system, event) = spec.split_once(':').unwrap_or((spec, "*"));
        let known = if event == "*" {
            self.has_system(system)
        } else {
            self.has_event(system, event)
        };
        if known {
            Ok(format!("{system}:{event}"))
        } else {
            Err(LiveError::Invalid(format!(
                "unknown event {spec:?}: not in available_events (presets: latency, sched, irq, all; \
                 or system, system:event, system:*)"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel() -> AvailableEvents {
        AvailableEvents::parse("sched:sched_switch\nsched:sched_waking\nirq:irq_handler_entry\ntimer:hrtimer_start\nworkqueue:workqueue_execute_start\nirq_vectors:local_timer_entry\n")
    }

    #[test]
    fn latency_preset_takes_the_groups_present_and_notes_the_missing() {
        let (lines, notes) = kernel().resolve(&["latency".into()]).unwrap();
        assert_eq!(
            lines,
            [
                "sched:*",
                "irq:*",
                "timer:*",
                "irq_vectors:*",
                "workqueue:*"
            ]
        );
        assert_eq!(
            notes,
            ["preset latency: this kernel has no preemptirq events"]
        );
    }

    /// An ARM kernel names IPI kinds with ipi_entry/ipi_exit and has no irq_vectors: nothing
    /// is missing there; a kernel with neither gets one note.
    #[test]
    fn the_interrupt_kinds_are_the_architectures_own() {
        let arm = AvailableEvents::parse(
            "sched:sched_switch\nirq:irq_handler_entry\nipi:ipi_raise\nipi:ipi_entry\nipi:ipi_exit\n",
        );
        let (lines, notes) = arm.resolve(&["irq".into()]).unwrap();
        assert_eq!(lines, ["irq:*", "ipi:ipi_entry", "ipi:ipi_exit"]);
        assert_eq!(
            notes,
            [
                "preset irq: this kernel has no timer events",
                "preset irq: this kernel has no preemptirq events"
            ]
        );
        let (_, notes) = AvailableEvents::parse("sched:sched_switch\n")
            .resolve(&["irq".into()])
            .unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n.contains("neither irq_vectors (x86) nor ipi_entry/ipi_exit (ARM)")),
            "{notes:?}"
        );
    }

    #[test]
    fn explicit_events_are_checked() {
        let (lines, _) = kernel()
            .resolve(&[
                "sched:sched_switch".into(),
                "workqueue".into(),
                "all".into(),
            ])
            .unwrap();
        assert_eq!(lines, ["sched:sched_switch", "workqueue:*", "*:*"]);
        let err = kernel()
            .resolve(&["sched:nope".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown event \"sched:nope\""), "{err}");
        assert!(kernel().resolve(&["nosuch".into()]).is_err());
    }

    #[test]
    fn a_kernel_without_sched_events_is_refused() {
        let err = AvailableEvents::parse("irq:irq_handler_entry\n")
            .resolve(&["sched".into()])
            .unwrap_err();
        assert!(err.to_string().contains("no sched events"), "{err}");
    }
}
