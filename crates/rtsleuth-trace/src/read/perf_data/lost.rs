//! What perf says it lost, in its two forms.
//!
//! `PERF_RECORD_LOST` is the kernel's: the ring buffer of one CPU was full and that many
//! records were dropped there, at that time. It becomes a loss at its place in the event
//! stream, as ftrace's `[LOST n EVENTS]` does.
//!
//! `PERF_RECORD_LOST_SAMPLES` with no time is perf's own summary, written when recording
//! ends: each event's count of samples the kernel could not write (the attr's `read_format`
//! `LOST`). It counts the same losses again, per event rather than per CPU and without a
//! place, so it only goes into a note, and into the total when it is the larger count. One
//! with a time (the kernel writes those for samples it dropped itself) is a loss in place.

#[derive(Default)]
pub struct Lost {
    /// Records lost at known places (`PERF_RECORD_LOST`, timed `LOST_SAMPLES`).
    pub in_place: u64,
    pub places: u64,
    /// perf's end-of-recording totals (untimed `LOST_SAMPLES`).
    pub totals: u64,
}

impl Lost {
    /// The note for the warnings, if perf's totals add to what the places say.
    pub fn note(&self) -> Option<String> {
        (self.totals > 0).then(|| {
            format!(
                "perf counted {} samples lost in all (its LOST_SAMPLES summary); {} of them at known places in the trace (PERF_RECORD_LOST): intervals spanning a loss are not measured",
                self.totals.max(self.in_place),
                self.in_place
            )
        })
    }

    /// The count for `lost_events`: the larger of the two accounts.
    pub fn total(&self) -> u64 {
        self.in_place.max(self.totals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_not_added_to_the_places() {
        let l = Lost {
            in_place: 805,
            places: 1,
            totals: 977,
        };
        assert_eq!(l.total(), 977);
        assert!(l.note().unwrap().contains("977 samples lost in all"));
        assert_eq!(Lost::default().note(), None);
    }
}
