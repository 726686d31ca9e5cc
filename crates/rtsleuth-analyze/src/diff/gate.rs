//! `--fail-on` gates: when a run got worse enough to fail a CI job.
//!
//! ```text
//! gate    = [task ":"] metric op value
//! metric  = count | avg | p50 | p99 | p99.9 | max
//! op      = ">" | "<"
//! value   = number [unit]              NEW's value itself           max>500us
//!         | ("+" | "-") number "%"     the change relative to BASE  p99>+20%
//!         | ("+" | "-") number [unit]  the change itself            p99.9>+50us
//! unit    = us | ms                    (latency metrics; us if none; count has none)
//! ```
//! A task selector matches a task's name with or without its number (`cyclictest` selects
//! `cyclictest` and `cyclictest#2`); without one the gate applies to every task compared. A
//! change has no value for a task absent from BASE, so a change gate skips it; a gate that
//! applies to no task at all is an error, not a pass, so that a misspelt gate cannot hide a
//! regression.

use super::compare::{Compared, MetricChange, TaskDiff};
use super::metric::Metric;
use super::names::key_name;
use super::DiffError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// NEW's value above or below this.
    Value(f64),
    /// NEW − BASE above or below this.
    Delta(f64),
    /// (NEW − BASE) / BASE in percent above or below this.
    Percent(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// As written.
    pub text: String,
    pub task: Option<String>,
    pub metric: Metric,
    /// `>` (true) or `<`.
    pub above: bool,
    pub bound: Bound,
}

/// A gate that failed for one task.
#[derive(Debug, Clone, PartialEq)]
pub struct Breach<'a> {
    pub task: &'a TaskDiff,
    pub change: MetricChange,
}

impl std::str::FromStr for Gate {
    type Err = DiffError;

    fn from_str(text: &str) -> Result<Gate, DiffError> {
        let bad = |why: &str| DiffError::Gate {
            gate: text.to_string(),
            why: why.to_string(),
        };
        let at = text
            .find(['>', '<'])
            .ok_or_else(|| bad("no comparison: write > or <"))?;
        let (left, value) = (text[..at].trim(), text[at + 1..].trim());
        let (task, metric) = match left.rsplit_once(':') {
            Some((task, metric)) => (Some(task.trim().to_string()), metric.trim()),
            None => (None, left),
        };
        if task.as_deref() == Some("") {
            return Err(bad("empty task before ':'"));
        }
        let metric = Metric::parse(metric)
            .ok_or_else(|| bad("the metric is one of count, avg, p50, p99, p99.9, max"))?;
        let bound = parse_value(value, metric.is_count()).map_err(|w| bad(&w))?;
        Ok(Gate {
            text: text.to_string(),
            task,
            metric,
            above: &text[at..=at] == ">",
            bound,
        })
    }
}

/// The value after the comparison, in µs (or a count, or percent).
fn parse_value(s: &str, count: bool) -> Result<Bound, String> {
    let (signed, rest) = match s.strip_prefix('+') {
        Some(r) => (Some(1.0), r),
        None => match s.strip_prefix('-') {
            Some(r) => (Some(-1.0), r),
            None => (None, s),
        },
    };
    if let Some(pct) = rest.strip_suffix('%') {
        let sign = signed.ok_or("a percentage is a change: write +20% or -20%")?;
        return Ok(Bound::Percent(sign * number(pct)?));
    }
    let (digits, scale) = if let Some(n) = rest.strip_suffix("ms") {
        (n, 1000.0)
    } else if let Some(n) = rest.strip_suffix("us") {
        (n, 1.0)
    } else {
        (rest, 1.0)
    };
    if count && digits != rest {
        return Err("count takes no unit".into());
    }
    let v = number(digits)? * scale;
    Ok(match signed {
        Some(sign) => Bound::Delta(sign * v),
        None => Bound::Value(v),
    })
}

fn number(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("'{s}' is not a number"))
}

impl Gate {
    fn selects(&self, key: &str) -> bool {
        self.task
            .as_deref()
            .map_or(true, |t| t == key || t == key_name(key))
    }

    /// The tasks this gate fails for; an error when it applies to none.
    pub fn check<'a>(&self, compared: &'a Compared) -> Result<Vec<Breach<'a>>, DiffError> {
        let mut applied = 0;
        let mut breaches = Vec::new();
        for task in compared.tasks.iter().filter(|t| self.selects(&t.key)) {
            let Some(change) = task.metric(self.metric) else {
                continue;
            };
            let value = match self.bound {
                Bound::Value(_) => Some(change.new),
                Bound::Delta(_) => Some(change.delta),
                // A change from nothing has no percentage: a gate on one skips it.
                Bound::Percent(_) => change.change_pct,
            };
            let Some(value) = value else { continue };
            applied += 1;
            let (Bound::Value(limit) | Bound::Delta(limit) | Bound::Percent(limit)) = self.bound;
            if (self.above && value > limit) || (!self.above && value < limit) {
                breaches.push(Breach {
                    task,
                    change: *change,
                });
            }
        }
        if applied == 0 {
            return Err(DiffError::Gate {
                gate: self.text.clone(),
                why: "applies to no task compared (is the task named, and is latency compared?)"
                    .into(),
            });
        }
        Ok(breaches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(s: &str) -> Gate {
        s.parse().unwrap()
    }

    #[test]
    fn the_grammar() {
        let g = gate("p99>+20%");
        assert_eq!(
            (g.task, g.metric, g.above, g.bound),
            (None, Metric::P99, true, Bound::Percent(20.0))
        );
        assert_eq!(gate("max>500us").bound, Bound::Value(500.0));
        assert_eq!(gate("max > 2ms").bound, Bound::Value(2000.0));
        assert_eq!(gate("p99.9>+50us").bound, Bound::Delta(50.0));
        assert_eq!(gate("p99.9>+50").bound, Bound::Delta(50.0));
        assert_eq!(gate("count<-10%").bound, Bound::Percent(-10.0));
        assert!(!gate("count<-10%").above);
        let g = gate("cyclictest:max>+20%");
        assert_eq!(g.task.as_deref(), Some("cyclictest"));
        assert_eq!(
            gate("kworker/0:1:avg>1ms").task.as_deref(),
            Some("kworker/0:1")
        );
        assert!(g.selects("cyclictest#2") && g.selects("cyclictest") && !g.selects("cyclic"));
        for bad in [
            "p98>1",
            "max",
            "max>20%",
            "count>5us",
            "max>fast",
            ":max>1",
            "max>-",
            "max>1e999",
        ] {
            assert!(bad.parse::<Gate>().is_err(), "{bad}");
        }
    }
}
