//! Interrupt work and interrupts-off time: `rtsleuth irq`'s report (its tables are already
//! bounded by its `top`), shown where the trace has such events.

use super::tables::block;
use super::Analyses;
use maud::{html, Markup};

pub fn irq(a: &Analyses) -> Markup {
    html! {
        section #irq {
            h2 { "Interrupts, softirqs, timer callbacks; interrupts and preemption off" }
            @if a.irq.blocks.is_empty() {
                p { "The trace has no interrupt, softirq or timer events." }
            }
            @for b in &a.irq.blocks { (block(b)) }
        }
    }
}
