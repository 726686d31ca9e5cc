//! CPU lists in the kernel's notation (`0-3,6`), as `--cpus`, `isolcpus=` and
//! `/sys/devices/system/cpu/online` write them.

use crate::LiveError;
use std::fmt;
use std::str::FromStr;

/// A sorted, duplicate-free set of CPU numbers.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CpuList(Vec<usize>);

impl CpuList {
    /// The CPUs the kernel has online now.
    pub fn online() -> Result<CpuList, LiveError> {
        let path = "/sys/devices/system/cpu/online";
        let text = std::fs::read_to_string(path).map_err(|e| LiveError::file(path, e))?;
        text.trim().parse()
    }

    /// The CPUs in increasing order.
    pub fn as_slice(&self) -> &[usize] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, cpu: usize) -> bool {
        self.0.binary_search(&cpu).is_ok()
    }

    /// Refuses a list naming a CPU that is not online now (the first such CPU is named).
    pub fn require_online(&self) -> Result<(), LiveError> {
        self.check_within(&CpuList::online()?)
    }

    /// Refuses a list naming a CPU that `online` lacks.
    fn check_within(&self, online: &CpuList) -> Result<(), LiveError> {
        match self.0.iter().find(|&&c| !online.contains(c)) {
            Some(cpu) => Err(LiveError::Invalid(format!(
                "CPU {cpu} is not online (online: {online})"
            ))),
            None => Ok(()),
        }
    }

    /// The CPUs of this list that `other` does not have.
    pub fn difference(&self, other: &CpuList) -> CpuList {
        CpuList(
            self.0
                .iter()
                .copied()
                .filter(|&c| !other.contains(c))
                .collect(),
        )
    }

    /// The list as the hex mask `tracing_cpumask` and `smp_affinity` use, 32 bits per
    /// comma-separated group as the kernel prints it.
    pub fn to_hex_mask(&self) -> String {
        let words = self.0.last().map_or(1, |&max| max / 32 + 1);
        let mut mask = vec![0u32; words];
        for &cpu in &self.0 {
            mask[cpu / 32] |= 1 << (cpu % 32);
        }
        mask.iter()
            .rev()
            .map(|w| format!("{w:08x}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl From<Vec<usize>> for CpuList {
    fn from(mut cpus: Vec<usize>) -> CpuList {
        cpus.sort_unstable();
        cpus.dedup();
        CpuList(cpus)
    }
}

impl FromStr for CpuList {
    type Err = LiveError;

    /// Parses `0-3,6,8-9`; an empty string is the empty set.
    fn from_str(text: &str) -> Result<CpuList, LiveError> {
        let bad = || LiveError::Invalid(format!("not a CPU list: {text:?} (expected e.g. 0-3,6)"));
        let mut cpus = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (lo, hi): (usize, usize) = match part.split_once('-') {
                Some((lo, hi)) => (
                    lo.parse().map_err(|_| bad())?,
                    hi.parse().map_err(|_| bad())?,
                ),
                None => {
                    let cpu = part.parse().map_err(|_| bad())?;
                    (cpu, cpu)
                }
            };
            if lo > hi || hi >= 8192 {
                return Err(bad());
            }
            cpus.extend(lo..=hi);
        }
        Ok(CpuList::from(cpus))
    }
}

impl fmt::Display for CpuList {
    /// Prints ranges the way the kernel does: `0-3,6`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        let mut first = true;
        while i < self.0.len() {
            let start = self.0[i];
            while i + 1 < self.0.len() && self.0[i + 1] == self.0[i] + 1 {
                i += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if self.0[i] == start {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{}", self.0[i])?;
            }
            i += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_and_singles_sorted_without_duplicates() {
        let list: CpuList = "6,0-3,2".parse().unwrap();
        assert_eq!(list.as_slice(), &[0, 1, 2, 3, 6]);
        assert_eq!(list.to_string(), "0-3,6");
        assert_eq!("".parse::<CpuList>().unwrap().as_slice(), &[] as &[usize]);
    }

    #[test]
    fn refuses_garbage_and_reversed_ranges() {
        for bad in ["a", "3-1", "1-", "-2", "0-99999"] {
            assert!(bad.parse::<CpuList>().is_err(), "{bad}");
        }
    }

    #[test]
    fn offline_cpus_are_refused_by_number() {
        let online = "0-1".parse().unwrap();
        "0-1"
            .parse::<CpuList>()
            .unwrap()
            .check_within(&online)
            .unwrap();
        let err = "1,5"
            .parse::<CpuList>()
            .unwrap()
            .check_within(&online)
            .unwrap_err();
        assert_eq!(err.to_string(), "CPU 5 is not online (online: 0-1)");
    }

    #[test]
    fn difference_keeps_what_the_other_lacks() {
        let a: CpuList = "0-5".parse().unwrap();
        assert_eq!(
            a.difference(&"1,3-4,9".parse().unwrap()).to_string(),
            "0,2,5"
        );
        assert!(a.difference(&a).is_empty());
    }

    #[test]
    fn hex_mask_groups_32_bits() {
        assert_eq!("0-1".parse::<CpuList>().unwrap().to_hex_mask(), "00000003");
        assert_eq!(
            "0,33".parse::<CpuList>().unwrap().to_hex_mask(),
            "00000002,00000001"
        );
    }
}
