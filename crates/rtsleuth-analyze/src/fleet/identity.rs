//! What identifies a trace across runs and machines: its content, not its path.

use rtsleuth_trace::read::TraceInfo;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use xxhash_rust::xxh3::Xxh3;

/// How much of each end of the file the hash reads.
const END_BYTES: u64 = 1 << 20;

/// A trace's content hash: XXH3-64 over its size (8 bytes, little-endian), its first MiB and
/// its last MiB, as 16 hex digits. Reading the whole file again would double the work of a
/// set run for an identity that this already gives: two recordings differ in their first
/// events' timestamps. It identifies, it does not prove integrity.
pub fn content_hash(path: &str) -> io::Result<String> {
    let mut f = File::open(path)?;
    let size = f.metadata()?.len();
    let mut h = Xxh3::new();
    h.update(&size.to_le_bytes());
    let mut buf = vec![0; END_BYTES as usize];
    let head = read_up_to(&mut f, &mut buf)?;
    h.update(&buf[..head]);
    if size > END_BYTES {
        let from = size.saturating_sub(END_BYTES).max(END_BYTES);
        f.seek(SeekFrom::Start(from))?;
        let tail = read_up_to(&mut f, &mut buf)?;
        h.update(&buf[..tail]);
    }
    Ok(format!("{:016x}", h.digest()))
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// One trace of a set, as its rows in every table name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    pub path: String,
    /// [`content_hash`]; none for standard input.
    pub hash: Option<String>,
    pub format: &'static str,
    pub compression: Option<&'static str>,
    pub events: u64,
    pub lost_events: u64,
    pub span_s: f64,
    /// `uname -a` of the recording machine, where the trace carries it.
    pub uname: Option<String>,
    /// The kernel release where the trace names it without a `uname -a`.
    pub kernel: Option<String>,
}

impl Identity {
    pub fn new(path: &str, hash: Option<String>, info: &TraceInfo) -> Identity {
        Identity {
            path: path.to_string(),
            hash,
            format: info.format.name(),
            compression: info.compression.map(|c| c.name()),
            events: info.events,
            lost_events: info.lost_events,
            span_s: info.span() as f64 / 1e9,
            uname: info.uname.clone(),
            kernel: info.kernel.clone(),
        }
    }

    /// The host name and kernel release out of `uname -a` (`Linux HOST RELEASE ...`), the
    /// release also from where the trace names it alone.
    pub fn host_and_kernel(&self) -> (Option<&str>, Option<&str>) {
        let mut words = self
            .uname
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .skip(1);
        (words.next(), words.next().or(self.kernel.as_deref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_sees_both_ends_and_the_size() {
        let d = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let p = d.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            content_hash(p.to_str().unwrap()).unwrap()
        };
        let big = vec![7u8; 3 << 20];
        let mut tail = big.clone();
        *tail.last_mut().unwrap() = 8;
        let mut middle = big.clone();
        middle[3 << 19] = 8;
        let a = write("a", &big);
        assert_eq!(a.len(), 16);
        assert_ne!(a, write("tail", &tail));
        // The middle is not read: same ends, same size, same hash (documented).
        assert_eq!(a, write("middle", &middle));
        assert_ne!(a, write("short", &big[1..]));
    }

    #[test]
    fn uname_words() {
        let mut info = TraceInfo::new("t", rtsleuth_trace::input::Format::TraceDat, None);
        info.uname = Some("Linux lab 6.12.95+deb12-rt-amd64 #1 SMP PREEMPT_RT x86_64".into());
        let id = Identity::new("t", None, &info);
        assert_eq!(
            id.host_and_kernel(),
            (Some("lab"), Some("6.12.95+deb12-rt-amd64"))
        );
        let mut info = TraceInfo::new("t", rtsleuth_trace::input::Format::Perfetto, None);
        info.kernel = Some("5.10.43-android12-9".into());
        let id = Identity::new("t", None, &info);
        assert_eq!(id.host_and_kernel(), (None, Some("5.10.43-android12-9")));
    }
}
