//! The audit as a report `Document` (`rtsleuth.audit/1`): a table of every check, then why
//! and how to fix each one that is not ok, worst first.

use super::{Audit, Verdict};
use rtsleuth_analyze::document::{Align, Block, Document, Table};
use serde_json::{json, Map, Value};

impl Audit {
    /// Builds the report.
    pub fn document(&self) -> Document {
        let summary = self.summary();
        let summary_json: Map<String, Value> = summary
            .iter()
            .map(|(v, n)| (v.as_str().to_string(), json!(n)))
            .collect();
        let json = json!({
            "schema": "rtsleuth.audit/1",
            "kernel": self.kernel,
            "cpus": self.cpus.as_slice(),
            "checks": self.checks,
            "summary": summary_json,
            "warnings": self.warnings,
        });

        let unknown = || "unknown".to_string();
        let kernel = format!(
            "{} {}",
            self.kernel.release.clone().unwrap_or_else(unknown),
            self.kernel.version.clone().unwrap_or_else(unknown)
        );
        let verdicts: Vec<String> = summary
            .iter()
            .map(|(v, n)| format!("{n} {}", v.as_str()))
            .collect();
        let cpus = if self.cpus.is_empty() {
            "none".to_string()
        } else {
            self.cpus.to_string()
        };
        let header = Block::Pairs(
            "RT setup audit".to_string(),
            vec![
                ("Kernel".to_string(), kernel),
                ("Measured CPUs".to_string(), cpus),
                ("Verdicts".to_string(), verdicts.join(", ")),
            ],
        );
        let mut table = Table::new(
            "Checks",
            &[
                ("Verdict", Align::Left),
                ("Check", Align::Left),
                ("Value", Align::Left),
            ],
        );
        for c in &self.checks {
            table.rows.push(vec![
                c.verdict.as_str().to_string(),
                c.title.to_string(),
                c.value.clone(),
            ]);
        }
        let mut fixes = Vec::new();
        for verdict in [Verdict::Bad, Verdict::Warn] {
            for c in self.checks.iter().filter(|c| c.verdict == verdict) {
                fixes.push(format!("[{}] {}: {}", verdict.as_str(), c.id, c.why));
                if let Some(fix) = &c.fix {
                    fixes.push(format!("    fix: {fix}"));
                }
            }
        }
        let mut blocks = vec![header, Block::Table(table)];
        if !fixes.is_empty() {
            blocks.push(Block::Lines(
                "Why it matters and how to fix it".to_string(),
                fixes,
            ));
        }
        Document {
            json,
            blocks,
            warnings: self.warnings.clone(),
        }
    }
}
