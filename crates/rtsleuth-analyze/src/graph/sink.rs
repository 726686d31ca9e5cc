//! The graph analysis as a [`GraphSink`]: routes each record to the call stack of its task
//! (or CPU), records completed calls per function, and hands captured trees to a [`Keeper`].

use super::functions::Functions;
use super::stack::{Done, Stack};
use super::tree::{Keeper, Pick};
use crate::latency::LatencyHistogram;
use rtsleuth_trace::event::Timestamp;
use rtsleuth_trace::read::function_graph::{Call, CallKind, GraphSink, Task};
use rustc_hash::FxHashMap;

/// Whose call stack a record belongs to. The kernel keeps a return stack per task, so when
/// the trace says which task ran (a TASK/PID column, or `=>` banners) the stack is the task's:
/// a task switched out inside `schedule()` resumes its own stack when it comes back. Without
/// that, the CPU's. The idle tasks all have pid 0, one per CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum StackKey {
    Task(i32),
    Idle(u32),
    Cpu(u32),
}

fn task_key(cpu: u32, pid: i32) -> StackKey {
    if pid == 0 {
        StackKey::Idle(cpu)
    } else {
        StackKey::Task(pid)
    }
}

/// Which calls start a captured tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Nothing,
    /// Every outermost call of this function.
    Func(u32),
    /// Every call not already inside a captured tree.
    TopLevel,
}

pub struct GraphPass {
    pub funcs: Functions,
    stacks: FxHashMap<StackKey, Stack>,
    /// The task each CPU runs, from the `=>` banners.
    running: FxHashMap<u32, i32>,
    target: Target,
    pub keeper: Keeper,
    /// Durations of the captured trees' roots (the invocations compared).
    pub invocations: LatencyHistogram,
    /// Exits and leaves printed without a duration.
    pub untimed: u64,
    /// Exits whose entry was not seen and that no `/* func */` tail names.
    pub unnamed: u64,
}

impl GraphPass {
    /// A pass capturing calls of `func` (by name), or top-level calls, keeping `pick`.
    pub fn new(func: Option<&str>, top_level: bool, pick: Pick) -> GraphPass {
        let mut funcs = Functions::default();
        let target = match func {
            Some(f) => Target::Func(funcs.id(f)),
            None if top_level => Target::TopLevel,
            None => Target::Nothing,
        };
        GraphPass {
            funcs,
            stacks: FxHashMap::default(),
            running: FxHashMap::default(),
            target,
            keeper: Keeper::new(pick),
            invocations: LatencyHistogram::default(),
            untimed: 0,
            unnamed: 0,
        }
    }

    fn key(&self, c: &Call<'_>) -> StackKey {
        match c
            .task
            .map(|t| t.pid)
            .or_else(|| self.running.get(&c.cpu).copied())
        {
            Some(pid) => task_key(c.cpu, pid),
            None => StackKey::Cpu(c.cpu),
        }
    }

    fn captures(&self, func: u32) -> bool {
        match self.target {
            Target::Nothing => false,
            Target::Func(f) => f == func,
            Target::TopLevel => true,
        }
    }

    fn complete(&mut self, done: Done, line: u64, ts: Option<Timestamp>) {
        let Some(func) = done.func else {
            self.unnamed += 1;
            return;
        };
        self.funcs
            .record(func, done.inclusive_ns, done.exclusive_ns, line, ts);
        if let Some(tree) = done.tree {
            self.invocations.record(tree.ns, line);
            self.keeper.offer(tree, &self.funcs, line, ts);
        }
    }

    /// Frames dropped without an exit, frames still open at the end, and captured trees cut
    /// at their size limit, over every stack.
    pub fn stack_totals(&self) -> (u64, u64, u64) {
        self.stacks.values().fold((0, 0, 0), |(a, o, t), s| {
            (a + s.abandoned, o + s.open() as u64, t + s.truncated)
        })
    }
}

impl GraphSink for GraphPass {
    fn call(&mut self, c: &Call<'_>, line: u64) {
        let key = self.key(c);
        let func = c.name.map(|n| self.funcs.id(n));
        let capture = func.is_some_and(|f| self.captures(f));
        let stack = self.stacks.entry(key).or_default();
        let done = match (c.kind, func, c.duration_ns) {
            (CallKind::Entry, Some(f), _) => {
                stack.enter(c.depth, f, capture);
                return;
            }
            (CallKind::Leaf, Some(f), Some(ns)) => stack.leaf(c.depth, f, ns, capture),
            (CallKind::Exit, _, Some(ns)) => stack.exit(c.depth, func, ns),
            (CallKind::Exit, _, None) => {
                stack.exit_untimed(c.depth);
                self.untimed += 1;
                return;
            }
            _ => {
                self.untimed += 1;
                return;
            }
        };
        self.complete(done, line, c.ts);
    }

    fn switch(&mut self, cpu: u32, from: Task<'_>, to: Task<'_>) {
        // Until the first banner a CPU's calls were on its anonymous stack: they were `from`'s.
        if !self.running.contains_key(&cpu) {
            if let Some(s) = self.stacks.remove(&StackKey::Cpu(cpu)) {
                self.stacks.entry(task_key(cpu, from.pid)).or_insert(s);
            }
        }
        self.running.insert(cpu, to.pid);
    }

    /// A cut means the open frames will not see their exits: they are dropped (counted as
    /// abandoned), so that calls after the cut are not matched with entries before it.
    fn gap(&mut self) {
        for s in self.stacks.values_mut() {
            s.abandon_all();
        }
    }
}
