//! Call trees of single invocations, for comparing a slow one against a typical one.
//!
//! Only the invocations a comparison needs are kept: a [`Keeper`] holds the best one seen so
//! far (the slowest, or the one nearest a target duration) and drops every other tree as soon
//! as it completes, so memory is one tree being built per call stack plus one kept.

use super::functions::Functions;
use rtsleuth_trace::event::Timestamp;

/// A call tree as the stack builds it: function ids.
#[derive(Debug)]
pub struct Node {
    pub func: u32,
    pub ns: u64,
    pub children: Vec<Node>,
}

/// A call tree with names, independent of the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct CallTree {
    pub name: String,
    pub ns: u64,
    pub children: Vec<CallTree>,
}

impl CallTree {
    fn named(node: Node, names: &Functions) -> CallTree {
        CallTree {
            name: names.name(node.func).to_string(),
            ns: node.ns,
            children: node
                .children
                .into_iter()
                .map(|c| CallTree::named(c, names))
                .collect(),
        }
    }

    /// The time of the function's own code: its time minus its children's.
    pub fn exclusive_ns(&self) -> u64 {
        self.ns
            .saturating_sub(self.children.iter().map(|c| c.ns).sum::<u64>())
    }

    /// Calls in this subtree, itself included.
    pub fn calls(&self) -> u64 {
        1 + self.children.iter().map(CallTree::calls).sum::<u64>()
    }
}

/// One kept invocation and where it was.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub tree: CallTree,
    /// The line of its closing brace (or of the leaf).
    pub line: u64,
    pub ts: Option<Timestamp>,
}

/// Which invocation to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    Slowest,
    /// The first one whose duration is nearest this many nanoseconds.
    Nearest(u64),
}

pub struct Keeper {
    pick: Pick,
    best: Option<Invocation>,
}

impl Keeper {
    pub fn new(pick: Pick) -> Keeper {
        Keeper { pick, best: None }
    }

    /// Keeps `node` if it beats the one kept so far (earlier wins ties).
    pub fn offer(&mut self, node: Node, names: &Functions, line: u64, ts: Option<Timestamp>) {
        let better = match (&self.best, self.pick) {
            (None, _) => true,
            (Some(b), Pick::Slowest) => node.ns > b.tree.ns,
            (Some(b), Pick::Nearest(t)) => node.ns.abs_diff(t) < b.tree.ns.abs_diff(t),
        };
        if better {
            self.best = Some(Invocation {
                tree: CallTree::named(node, names),
                line,
                ts,
            });
        }
    }

    pub fn take(&mut self) -> Option<Invocation> {
        self.best.take()
    }
}
