//! Unpacking `CompactSched`: the column form Perfetto uses for `sched_switch` and
//! `sched_waking` when `compact_sched` is enabled (the default on recent Android).

use super::checked_bundle::MAX_BUNDLE_EVENTS;
use super::messages::CompactSched;

/// One row of the columns, with its absolute timestamp and its comm looked up.
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    /// A switch states only the task switched to; what was switched out is the task the CPU's
    /// previous switch switched to.
    Switch {
        ts: u64,
        prev_state: i64,
        next_pid: i32,
        next_prio: i32,
        next_comm: String,
    },
    Waking {
        ts: u64,
        pid: i32,
        prio: i32,
        target_cpu: i32,
        comm: String,
    },
}

impl Row {
    pub fn ts(&self) -> u64 {
        match *self {
            Row::Switch { ts, .. } | Row::Waking { ts, .. } => ts,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CompactError {
    #[error("CompactSched {what} columns differ in length ({lengths:?})")]
    Columns {
        what: &'static str,
        lengths: Vec<usize>,
    },
    #[error("CompactSched comm index {index} is past its intern table of {len}")]
    Comm { index: u32, len: usize },
    #[error("CompactSched holds {rows} rows, more than the {MAX_BUNDLE_EVENTS} of any bundle Perfetto writes")]
    TooMany { rows: usize },
}

/// The rows of `cs`: its switches and its wakings, each in its columns' order (their time
/// order, as Perfetto writes them).
pub fn rows(cs: CompactSched) -> Result<(Vec<Row>, Vec<Row>), CompactError> {
    let switches = [
        cs.switch_timestamp.len(),
        cs.switch_prev_state.len(),
        cs.switch_next_pid.len(),
        cs.switch_next_prio.len(),
        cs.switch_next_comm_index.len(),
    ];
    same_length("switch", &switches)?;
    let wakings = [
        cs.waking_timestamp.len(),
        cs.waking_pid.len(),
        cs.waking_target_cpu.len(),
        cs.waking_prio.len(),
        cs.waking_comm_index.len(),
    ];
    same_length("waking", &wakings)?;
    // Each row becomes an event with its own comm: bounded like a bundle's events.
    let total = switches[0] + wakings[0];
    if total > MAX_BUNDLE_EVENTS {
        return Err(CompactError::TooMany { rows: total });
    }
    let comm = |index: u32| {
        cs.intern_table
            .get(index as usize)
            .cloned()
            .ok_or(CompactError::Comm {
                index,
                len: cs.intern_table.len(),
            })
    };
    let mut switch_rows = Vec::with_capacity(switches[0]);
    for (i, ts) in absolute(&cs.switch_timestamp).enumerate() {
        switch_rows.push(Row::Switch {
            ts,
            prev_state: cs.switch_prev_state[i],
            next_pid: cs.switch_next_pid[i],
            next_prio: cs.switch_next_prio[i],
            next_comm: comm(cs.switch_next_comm_index[i])?,
        });
    }
    let mut waking_rows = Vec::with_capacity(wakings[0]);
    for (i, ts) in absolute(&cs.waking_timestamp).enumerate() {
        waking_rows.push(Row::Waking {
            ts,
            pid: cs.waking_pid[i],
            prio: cs.waking_prio[i],
            target_cpu: cs.waking_target_cpu[i],
            comm: comm(cs.waking_comm_index[i])?,
        });
    }
    Ok((switch_rows, waking_rows))
}

fn same_length(what: &'static str, lengths: &[usize]) -> Result<(), CompactError> {
    if lengths.iter().all(|&n| n == lengths[0]) {
        return Ok(());
    }
    Err(CompactError::Columns {
        what,
        lengths: lengths.to_vec(),
    })
}

/// Running sum of delta-coded timestamps (wrapping, so a damaged delta cannot panic).
fn absolute(deltas: &[u64]) -> impl Iterator<Item = u64> + '_ {
    deltas.iter().scan(0u64, |ts, &d| {
        *ts = ts.wrapping_add(d);
        Some(*ts)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_and_interned_comms() {
        let cs = CompactSched {
            intern_table: vec!["a".into(), "b".into()],
            switch_timestamp: vec![1000, 5, 7],
            switch_prev_state: vec![1, 0, 256],
            switch_next_pid: vec![10, 11, 0],
            switch_next_prio: vec![120, 100, 120],
            switch_next_comm_index: vec![1, 0, 1],
            waking_timestamp: vec![1003],
            waking_pid: vec![11],
            waking_target_cpu: vec![2],
            waking_prio: vec![100],
            waking_comm_index: vec![0],
        };
        let (switches, wakings) = rows(cs).unwrap();
        let ts: Vec<u64> = switches.iter().chain(&wakings).map(Row::ts).collect();
        assert_eq!(ts, [1000, 1005, 1012, 1003]);
        assert_eq!(
            switches[1],
            Row::Switch {
                ts: 1005,
                prev_state: 0,
                next_pid: 11,
                next_prio: 100,
                next_comm: "a".into()
            }
        );
    }

    #[test]
    fn ragged_columns_and_bad_indices_are_errors() {
        let ragged = CompactSched {
            switch_timestamp: vec![1, 2],
            switch_next_pid: vec![1],
            ..CompactSched::default()
        };
        assert_eq!(
            rows(ragged).unwrap_err(),
            CompactError::Columns {
                what: "switch",
                lengths: vec![2, 0, 1, 0, 0]
            }
        );
        let bad = CompactSched {
            waking_timestamp: vec![1],
            waking_pid: vec![1],
            waking_target_cpu: vec![0],
            waking_prio: vec![120],
            waking_comm_index: vec![3],
            ..CompactSched::default()
        };
        assert_eq!(
            rows(bad).unwrap_err(),
            CompactError::Comm { index: 3, len: 0 }
        );
        let n = MAX_BUNDLE_EVENTS + 1;
        let huge = CompactSched {
            waking_timestamp: vec![1; n],
            waking_pid: vec![1; n],
            waking_target_cpu: vec![0; n],
            waking_prio: vec![120; n],
            waking_comm_index: vec![0; n],
            intern_table: vec!["a".into()],
            ..CompactSched::default()
        };
        assert_eq!(rows(huge).unwrap_err(), CompactError::TooMany { rows: n });
    }
}
