//! Workqueue waits: `rtsleuth wq`'s report, shown only where the trace has workqueue events
//! (its tables would otherwise be empty; the warning at the top says so).

use super::tables::block;
use super::Analyses;
use maud::{html, Markup};

pub fn wq(a: &Analyses) -> Markup {
    let has_work = a.wq.json["functions"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    html! {
        @if has_work {
            section #wq {
                h2 { "Workqueues" }
                @for b in &a.wq.blocks { (block(b)) }
            }
        }
    }
}
