//! One call stack (of a task, or of a CPU when the trace does not say which task ran),
//! rebuilt from the records' depths.
//!
//! The stack holds open frames only. An exit closes the frame at its own depth; frames deeper
//! than that were never closed (events lost, output cut) and are dropped. When a trace starts
//! in the middle of a call tree, exits and children arrive for entries that were never seen:
//! a *phantom* frame stands in for the missing entry, so the parent's exclusive time is still
//! right and a `/* func */` tail can still name it.

use super::tree::Node;

/// How many nodes one captured tree may hold; past this its further calls are left out.
pub const MAX_TREE_NODES: usize = 200_000;

struct Frame {
    depth: u32,
    func: Option<u32>,
    /// Inclusive time of the completed direct children.
    children_ns: u64,
    /// The children's trees, when this frame is part of a captured tree.
    kids: Option<Vec<Node>>,
}

/// A completed call.
pub struct Done {
    pub func: Option<u32>,
    pub inclusive_ns: u64,
    pub exclusive_ns: u64,
    /// Its whole tree, when it was the root of a capture.
    pub tree: Option<Node>,
}

#[derive(Default)]
pub struct Stack {
    frames: Vec<Frame>,
    /// Nodes in the tree being captured, for [`MAX_TREE_NODES`].
    captured: usize,
    /// Frames dropped without their exit.
    pub abandoned: u64,
    /// Captured trees that hit [`MAX_TREE_NODES`].
    pub truncated: u64,
}

impl Stack {
    /// `func() {` at `depth`; `capture` starts a tree here unless one is already being built.
    pub fn enter(&mut self, depth: u32, func: u32, capture: bool) {
        self.drop_from(depth);
        let kids = (self.capturing() || capture).then(Vec::new);
        if kids.is_some() && !self.capturing() {
            self.captured = 0;
        }
        self.frames.push(Frame {
            depth,
            func: Some(func),
            children_ns: 0,
            kids,
        });
    }

    /// `func();` with its duration.
    pub fn leaf(&mut self, depth: u32, func: u32, ns: u64, capture: bool) -> Done {
        let node = (capture || self.capturing_at(depth)).then(|| Node {
            func,
            ns,
            children: Vec::new(),
        });
        let tree = self.add_to_parent(depth, ns, node);
        Done {
            func: Some(func),
            inclusive_ns: ns,
            exclusive_ns: ns,
            tree,
        }
    }

    /// `}` at `depth` with its duration; `tail` is the function a `/* func */` tail names.
    pub fn exit(&mut self, depth: u32, tail: Option<u32>, ns: u64) -> Done {
        let frame = self.take(depth).unwrap_or(Frame {
            depth,
            func: None,
            children_ns: 0,
            kids: None,
        });
        let func = frame.func.or(tail);
        let node = match (frame.kids, func) {
            (Some(children), Some(func)) => Some(Node { func, ns, children }),
            _ => None,
        };
        let tree = self.add_to_parent(depth, ns, node);
        Done {
            func,
            inclusive_ns: ns,
            exclusive_ns: ns.saturating_sub(frame.children_ns),
            tree,
        }
    }

    /// `}` without a duration (the column is off): the frame closes, untimed.
    pub fn exit_untimed(&mut self, depth: u32) {
        self.take(depth);
    }

    /// Forgets every open frame (the output was cut); calls among them count as abandoned.
    pub fn abandon_all(&mut self) {
        self.abandoned += self.open() as u64;
        self.frames.clear();
    }

    /// Calls entered and not yet exited (at the end of the trace); phantoms are not calls
    /// that were seen.
    pub fn open(&self) -> usize {
        self.frames.iter().filter(|f| f.func.is_some()).count()
    }

    fn capturing(&self) -> bool {
        self.frames.last().is_some_and(|f| f.kids.is_some())
    }

    /// Whether a call completing at `depth` lands in a captured tree.
    fn capturing_at(&self, depth: u32) -> bool {
        depth > 0
            && self
                .frames
                .last()
                .is_some_and(|f| f.depth == depth - 1 && f.kids.is_some())
    }

    /// Pops the frame at `depth` (dropping deeper, unclosed ones).
    fn take(&mut self, depth: u32) -> Option<Frame> {
        self.drop_from(depth + 1);
        match self.frames.last() {
            Some(f) if f.depth == depth => self.frames.pop(),
            _ => None,
        }
    }

    /// Drops open frames at `depth` or deeper: their exits never came.
    fn drop_from(&mut self, depth: u32) {
        while self.frames.last().is_some_and(|f| f.depth >= depth) {
            if self.frames.pop().is_some_and(|f| f.func.is_some()) {
                self.abandoned += 1;
            }
        }
    }

    /// Adds a completed call's time (and tree node) to the frame of its caller, standing in a
    /// phantom for a caller whose entry was not seen. Returns the node when no caller takes it:
    /// the node is then a finished root.
    fn add_to_parent(&mut self, depth: u32, ns: u64, node: Option<Node>) -> Option<Node> {
        if depth == 0 {
            return node;
        }
        self.drop_from(depth);
        if !matches!(self.frames.last(), Some(f) if f.depth == depth - 1) {
            self.frames.push(Frame {
                depth: depth - 1,
                func: None,
                children_ns: 0,
                kids: None,
            });
        }
        let parent = self.frames.last_mut().expect("pushed above");
        parent.children_ns += ns;
        match (&mut parent.kids, node) {
            (Some(kids), Some(node)) => {
                if self.captured < MAX_TREE_NODES {
                    self.captured += 1;
                    kids.push(node);
                } else if self.captured == MAX_TREE_NODES {
                    self.captured += 1;
                    self.truncated += 1;
                }
                None
            }
            (_, node) => node,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_is_inclusive_minus_children() {
        let mut s = Stack::default();
        s.enter(0, 1, false);
        s.leaf(1, 2, 300, false);
        s.leaf(1, 2, 200, false);
        let d = s.exit(0, None, 1000);
        assert_eq!(
            (d.func, d.inclusive_ns, d.exclusive_ns),
            (Some(1), 1000, 500)
        );
        assert_eq!((s.open(), s.abandoned), (0, 0));
    }

    #[test]
    fn a_fragment_closes_phantoms_named_by_their_tails() {
        let mut s = Stack::default();
        // 3)   0.313 us |            _raw_spin_unlock_irq();
        // 3)   3.177 us |          }
        // 3) # 1889.063 us |        } /* __schedule */
        s.leaf(3, 1, 313, false);
        assert_eq!(s.exit(2, None, 3177).exclusive_ns, 2864);
        let d = s.exit(1, Some(7), 1_889_063);
        assert_eq!((d.func, d.exclusive_ns), (Some(7), 1_889_063 - 3177));
    }

    #[test]
    fn captured_tree_and_unclosed_frames() {
        let mut s = Stack::default();
        s.enter(0, 1, true);
        s.enter(1, 2, false);
        s.leaf(2, 3, 100, false);
        s.enter(2, 4, false); // never closed
        let d = s.exit(1, None, 400);
        assert_eq!(s.abandoned, 1);
        assert!(d.tree.is_none());
        let root = s.exit(0, None, 1000).tree.unwrap();
        assert_eq!((root.func, root.ns, root.children.len()), (1, 1000, 1));
        assert_eq!(root.children[0].children[0].ns, 100);
    }
}
