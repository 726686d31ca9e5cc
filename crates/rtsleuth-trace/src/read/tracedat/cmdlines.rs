//! `saved_cmdlines`: the kernel's pid → comm cache at extraction time. Records carry only the
//! pid, so this is where an event's task name comes from, as it is for the kernel's own text.

use rustc_hash::FxHashMap;

#[derive(Debug, Default)]
pub struct Cmdlines {
    by_pid: FxHashMap<i32, String>,
}

impl Cmdlines {
    /// Parses `pid comm` lines (comms may contain spaces).
    pub fn parse(text: &str) -> Cmdlines {
        let by_pid = text
            .lines()
            .filter_map(|l| {
                let (pid, comm) = l.trim_start().split_once(' ')?;
                Some((pid.parse().ok()?, comm.to_string()))
            })
            .collect();
        Cmdlines { by_pid }
    }

    pub fn get(&self, pid: i32) -> Option<&str> {
        self.by_pid.get(&pid).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comms_with_spaces() {
        let c = Cmdlines::parse("1 systemd\n2711 Web Content\nx y\n");
        assert_eq!(c.get(2711), Some("Web Content"));
        assert_eq!(c.get(1), Some("systemd"));
        assert_eq!(c.get(3), None);
    }
}
