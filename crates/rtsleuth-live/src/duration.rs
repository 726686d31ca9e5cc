//! Run lengths as cyclictest's `-D` writes them, shared by every live command.

use crate::LiveError;
use std::time::Duration;

/// Parses a run length as cyclictest's `-D` does: plain seconds, or a number with `s`, `m`,
/// `h` or `d`.
pub fn parse_duration(text: &str) -> Result<Duration, LiveError> {
    let bad = || {
        LiveError::Invalid(format!(
            "not a duration: {text:?} (expected e.g. 30, 10s, 5m, 1h or 2d)"
        ))
    };
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let secs_per = match unit.to_ascii_lowercase().as_str() {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    n.checked_mul(secs_per)
        .map(Duration::from_secs)
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_cyclictest_writes_them() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1H").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("2d").unwrap(), Duration::from_secs(172_800));
        for bad in ["", "s", "1.5s", "10x", "-3", "5 m", "99999999999999999999"] {
            let err = parse_duration(bad).unwrap_err().to_string();
            assert!(err.contains("not a duration"), "{bad}: {err}");
        }
    }
}
