//! The two writes that freeze a trace at a spike, prepared in advance so that the thread that
//! saw the spike can make them at once, without allocating or taking a lock.

use super::Session;
use crate::LiveError;
use std::fs::File;
use std::io::Write;

/// An open `trace_marker` and `tracing_on` of a session's buffer.
pub struct SpikeStop {
    marker: File,
    switch: File,
}

impl SpikeStop {
    /// Opens the files of `session`'s buffer; the session already saved `tracing_on`, so turning
    /// it off here is undone with everything else.
    pub fn open(session: &Session) -> Result<SpikeStop, LiveError> {
        let switch_path = session.dir().join("tracing_on");
        let switch = File::options()
            .write(true)
            .open(&switch_path)
            .map_err(|e| LiveError::file(&switch_path, e))?;
        Ok(SpikeStop {
            marker: session.open_marker()?,
            switch,
        })
    }

    /// Writes into two ordinary files, for tests of what calls it.
    #[cfg(test)]
    pub(crate) fn into_files(marker: File, switch: File) -> SpikeStop {
        SpikeStop { marker, switch }
    }

    /// Writes cyclictest's `hit latency threshold (X > Y)` mark, which `explain` takes as the
    /// victim's own account of its lateness, then stops recording so the events before the
    /// spike are not overwritten. Errors are ignored: the caller is a measuring thread with no
    /// one to report to, and a missing mark only makes the explanation less precise.
    pub fn mark_and_stop(&self, latency_us: u64, threshold_us: u64) {
        let mut line = [0u8; 80];
        let mut cursor = std::io::Cursor::new(&mut line[..]);
        let _ = write!(
            cursor,
            "hit latency threshold ({latency_us} > {threshold_us})"
        );
        let len = cursor.position() as usize;
        let _ = (&self.marker).write(&line[..len]);
        let _ = (&self.switch).write(b"0");
    }
}
