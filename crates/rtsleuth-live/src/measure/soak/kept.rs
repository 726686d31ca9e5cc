//! The worst N captures stay on disk; the others are deleted as soon as they fall out, so a
//! night's run uses N traces' worth of disk whatever the number of spikes.

use crate::LiveError;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Kept {
    latency_ns: u64,
    /// Later captures lose ties, so the first of equal spikes stays.
    n: Reverse<u64>,
    path: PathBuf,
}

/// The captures kept, least bad on top so it is the one evicted.
#[derive(Debug)]
pub struct KeptTraces {
    limit: usize,
    heap: BinaryHeap<Reverse<Kept>>,
}

impl KeptTraces {
    pub fn new(limit: usize) -> KeptTraces {
        KeptTraces {
            limit,
            heap: BinaryHeap::with_capacity(limit + 1),
        }
    }

    /// Offers capture `n`'s file; returns whether it is kept. The file is deleted when it is
    /// not, and so is the one it pushes out.
    pub fn offer(&mut self, n: u64, latency_ns: u64, path: PathBuf) -> Result<bool, LiveError> {
        self.heap.push(Reverse(Kept {
            latency_ns,
            n: Reverse(n),
            path,
        }));
        if self.heap.len() <= self.limit {
            return Ok(true);
        }
        let Some(Reverse(out)) = self.heap.pop() else {
            return Ok(true);
        };
        std::fs::remove_file(&out.path).map_err(|e| LiveError::file(&out.path, e))?;
        Ok(out.n.0 != n)
    }

    /// (capture number, latency, file), worst first.
    pub fn worst_first(&self) -> Vec<(u64, u64, PathBuf)> {
        let mut all: Vec<&Kept> = self.heap.iter().map(|r| &r.0).collect();
        all.sort_by(|a, b| b.cmp(a));
        all.into_iter()
            .map(|k| (k.n.0, k.latency_ns, k.path.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_worst_and_deletes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let mut kept = KeptTraces::new(2);
        let mut offer = |n: u64, us: u64| {
            let p = dir.path().join(format!("spike-{n}.dat"));
            std::fs::write(&p, b"x").unwrap();
            kept.offer(n, us * 1000, p).unwrap()
        };
        assert!(offer(1, 300));
        assert!(offer(2, 100));
        assert!(offer(3, 200), "200 us pushes out 100 us");
        assert!(!offer(4, 50), "50 us is below both");
        assert!(!offer(5, 200), "a tie loses to the earlier capture");
        let names: Vec<_> = kept
            .worst_first()
            .iter()
            .map(|(n, ns, _)| (*n, *ns / 1000))
            .collect();
        assert_eq!(names, vec![(1, 300), (3, 200)]);
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, vec!["spike-1.dat", "spike-3.dat"]);
    }

    #[test]
    fn keeping_none_deletes_every_capture() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("spike-1.dat");
        std::fs::write(&p, b"x").unwrap();
        let mut kept = KeptTraces::new(0);
        assert!(!kept.offer(1, 5000, p.clone()).unwrap());
        assert!(!p.exists());
        assert!(kept.worst_first().is_empty());
    }
}
