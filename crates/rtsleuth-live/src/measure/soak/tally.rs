//! What a soak has found so far: the spikes seen, captured, explained and missed, and their
//! causes added up the way `report` and `diff` add up the findings file (the same
//! [`Summary`], fed the same lines). The worker adds to it; the live view and the final report
//! read it. Its size is one entry per culprit, whatever the run's length.

use rtsleuth_core::event::ns_to_us;
use rtsleuth_core::report::{fmt_us, Block};
use rtsleuth_core::soak::Summary;
use serde_json::{json, Value};

#[derive(Debug)]
pub struct Tally {
    pub threshold_us: u64,
    /// Wake-ups above the threshold; filled in from the recorder's counters.
    pub seen: u64,
    /// Seen while another capture was under way, so never traced on their own.
    pub missed: u64,
    /// The latest wake-up among those.
    pub missed_worst_ns: u64,
    /// Time with recording off, from each captured spike until recording was on again.
    pub blind_ns: u64,
    /// Captures read out and written.
    pub captured: u64,
    /// Captures whose spike `explain` could not find (the line in the findings file says why).
    pub unexplained: u64,
    summary: Summary,
}

impl Tally {
    pub fn new(threshold_us: u64) -> Tally {
        Tally {
            threshold_us,
            seen: 0,
            missed: 0,
            missed_worst_ns: 0,
            blind_ns: 0,
            captured: 0,
            unexplained: 0,
            summary: Summary::new(0),
        }
    }

    /// Adds a line just written to the findings file.
    pub fn add(&mut self, line: &Value) {
        self.captured += 1;
        if line["finding"].is_null() {
            self.unexplained += 1;
        }
        // The worker wrote the line; a refusal here would be a bug in line.rs, caught by its
        // tests, and must not end a night's run.
        let _ = self.summary.add(line);
    }

    pub fn explained(&self) -> u64 {
        self.captured - self.unexplained
    }

    /// The counts in one line.
    pub fn headline(&self) -> String {
        format!(
            "Spikes over {} us: {} seen, {} explained, {} unexplained, {} missed (during a capture)",
            self.threshold_us,
            self.seen,
            self.explained(),
            self.unexplained,
            self.missed
        )
    }

    /// The live view's lines under the threads: the counts, then the three largest causes.
    pub fn live_lines(&self) -> Vec<String> {
        let mut lines = vec![self.headline()];
        lines.extend(self.summary.leaders(3).into_iter().map(|l| format!("  {l}")));
        lines
    }

    /// `rtsleuth.measure/1`'s `spikes` object; the fields of `files` (the findings file, the
    /// traces kept) are added to it.
    pub fn json(&self, files: Value) -> Value {
        let mut v = json!({
            "threshold_us": self.threshold_us,
            "seen": self.seen,
            "captured": self.captured,
            "explained": self.explained(),
            "unexplained": self.unexplained,
            "missed": self.missed,
            "missed_worst_us": (self.missed > 0).then(|| ns_to_us(self.missed_worst_ns)),
            "blind_s": self.blind_ns as f64 / 1e9,
            "by_cause": self.summary.aggregate_rows(),
        });
        if let (Some(v), Value::Object(files)) = (v.as_object_mut(), files) {
            v.extend(files);
        }
        v
    }

    /// The report's blocks: the counts and the causes over every explained spike.
    pub fn blocks(&self, kept: &[(u64, u64, String)], findings_file: &str) -> Vec<Block> {
        let mut pairs = vec![
            ("threshold".to_owned(), format!("{} us", self.threshold_us)),
            ("seen".to_owned(), self.seen.to_string()),
            ("explained".to_owned(), self.explained().to_string()),
            ("unexplained".to_owned(), self.unexplained.to_string()),
            ("missed".to_owned(), self.missed_line()),
            (
                "not recorded".to_owned(),
                format!(
                    "{:.3} s, from each captured spike until recording was on again",
                    self.blind_ns as f64 / 1e9
                ),
            ),
            ("findings".to_owned(), findings_file.to_owned()),
        ];
        for (n, ns, file) in kept {
            pairs.push((
                format!("kept #{n}"),
                format!("{file} ({} us)", fmt_us(ns_to_us(*ns))),
            ));
        }
        vec![
            Block::Pairs("Spikes".to_owned(), pairs),
            Block::Table(self.summary.table(self.threshold_us as f64)),
        ]
    }

    fn missed_line(&self) -> String {
        if self.missed == 0 {
            return "0".to_owned();
        }
        format!(
            "{} (came while another spike was being captured; the worst {} us)",
            self.missed,
            fmt_us(ns_to_us(self.missed_worst_ns))
        )
    }
}
