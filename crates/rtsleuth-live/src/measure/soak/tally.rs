//! What a soak has found so far: the spikes seen, captured, explained and missed, and their
//! causes added up the way `report` and `diff` add up the findings file (the same
//! [`Summary`], fed the same lines). The worker adds to it; the live view and the final report
//! read it. Its size is one entry per culprit, whatever the run's length.

use rtsleuth_analyze::document::{fmt_us, Block};
use rtsleuth_analyze::soak::Summary;
use rtsleuth_trace::event::ns_to_us;
use serde_json::{json, Value};

#[derive(Debug)]
pub struct Tally {
    pub threshold_us: u64,
    /// Wake-ups above the threshold; filled in from the recorder's counters.
    pub seen: u64,
    /// Seen while another capture was under way, or due before recording restarted after
    /// one: never traced whole.
    pub missed: u64,
    /// The latest wake-up among those.
    pub missed_worst_ns: u64,
    /// Time with recording off, from each captured spike until recording was on again.
    pub blind_ns: u64,
    /// The findings file's lines so far, added up: one per capture.
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
            summary: Summary::new(0),
        }
    }

    /// Adds a line just written to the findings file.
    pub fn add(&mut self, line: &Value) {
        // The worker wrote the line; a refusal here would be a bug in line.rs, caught by its
        // tests, and must not end a night's run.
        let _ = self.summary.add(line);
    }

    /// Captures read out and written.
    pub fn captured(&self) -> u64 {
        self.summary.spikes()
    }

    /// Captures whose spike `explain` could not find (the line in the findings file says why).
    pub fn unexplained(&self) -> u64 {
        self.summary.unexplained()
    }

    pub fn explained(&self) -> u64 {
        self.captured() - self.unexplained()
    }

    /// The counts in one line.
    pub fn headline(&self) -> String {
        format!(
            "Spikes over {} us: {} seen, {} explained, {} unexplained, {} missed (not recorded whole)",
            self.threshold_us,
            self.seen,
            self.explained(),
            self.unexplained(),
            self.missed
        )
    }

    /// The live view's lines under the threads: the counts, then the three largest causes.
    pub fn live_lines(&self) -> Vec<String> {
        let mut lines = vec![self.headline()];
        lines.extend(
            self.summary
                .leaders(3)
                .into_iter()
                .map(|l| format!("  {l}")),
        );
        lines
    }

    /// `rtsleuth.measure/1`'s `spikes` object; the fields of `files` (the findings file, the
    /// traces kept) are added to it.
    pub fn json(&self, files: Value) -> Value {
        let mut v = json!({
            "threshold_us": self.threshold_us,
            "seen": self.seen,
            "captured": self.captured(),
            "explained": self.explained(),
            "unexplained": self.unexplained(),
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
            ("unexplained".to_owned(), self.unexplained().to_string()),
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
            "{} (came during another spike's capture, or were due before recording restarted after one; the worst {} us)",
            self.missed,
            fmt_us(ns_to_us(self.missed_worst_ns))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(finding: bool, rows: Value) -> Value {
        json!({
            "schema": "rtsleuth.spike/1",
            "spike": {"cpu": 0, "tid": 5, "threshold_us": 500.0, "latency_us": 900.0},
            "finding": if finding { json!({"task": {"comm": "rtsleuth-m0", "pid": 5}, "latency_us": 900.0}) } else { Value::Null },
            "aggregate": rows,
            "warnings": [],
        })
    }

    #[test]
    fn counts_and_causes_over_the_lines() {
        let mut t = Tally::new(500);
        let hog = |us: f64| json!({"kind": "higher_priority", "culprit": "hog-9", "spikes": 1, "total_us": us, "max_us": us});
        t.add(&line(true, json!([hog(800.0)])));
        t.add(&line(true, json!([hog(700.0)])));
        t.add(&line(false, json!([])));
        (t.seen, t.missed, t.missed_worst_ns, t.blind_ns) = (5, 2, 1_234_500, 60_000_000);
        assert_eq!(
            t.headline(),
            "Spikes over 500 us: 5 seen, 2 explained, 1 unexplained, 2 missed (not recorded whole)"
        );
        assert_eq!(
            t.live_lines()[1],
            "  higher_priority hog-9: 2 spikes, 1500 us"
        );
        let j = t.json(json!({"findings_file": "f.jsonl"}));
        assert_eq!(
            (
                j["captured"].as_u64(),
                j["explained"].as_u64(),
                j["missed_worst_us"].as_f64()
            ),
            (Some(3), Some(2), Some(1234.5))
        );
        assert_eq!(j["blind_s"], 0.06);
        assert_eq!(j["findings_file"], "f.jsonl");
        assert_eq!(j["by_cause"][0]["total_us"], 1500.0);
        let blocks = t.blocks(&[(2, 800_000, "d/spike-000002.dat".into())], "f.jsonl");
        let Block::Pairs(_, pairs) = &blocks[0] else {
            panic!()
        };
        let get = |k: &str| pairs.iter().find(|p| p.0 == k).map(|p| p.1.as_str());
        assert_eq!(
            get("missed"),
            Some("2 (came during another spike's capture, or were due before recording restarted after one; the worst 1234.5 us)")
        );
        assert_eq!(get("kept #2"), Some("d/spike-000002.dat (800 us)"));
        let Block::Table(table) = &blocks[1] else {
            panic!()
        };
        assert_eq!(
            table.rows[0],
            vec!["higher_priority", "hog-9", "2", "1500", "800"]
        );
    }
}
