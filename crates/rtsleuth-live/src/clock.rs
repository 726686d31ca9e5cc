//! The clocks the measuring and detecting threads read, sleep on and report in:
//! CLOCK_MONOTONIC, which is also ftrace's `mono` clock, so their times line up with traces.

use crate::LiveError;

/// Nanoseconds of `clock` (`libc::CLOCK_MONOTONIC`, `libc::CLOCK_REALTIME`).
pub fn now(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid out-pointer; these clocks cannot fail.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC now.
pub fn mono() -> u64 {
    now(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME - CLOCK_MONOTONIC in nanoseconds: what turns one into the other for the
/// duration of a run (a clock step during the run would shift it; NTP slewing does not matter
/// at the microsecond scale).
pub fn wall_offset() -> i64 {
    now(libc::CLOCK_REALTIME) as i64 - mono() as i64
}

/// Sleeps until `t`, nanoseconds of CLOCK_MONOTONIC, on the absolute timer, so a thread's
/// deadlines stay on their grid however late each sleep began; false when a signal ended it
/// early.
pub fn sleep_until(t: u64) -> Result<bool, LiveError> {
    let ts = libc::timespec {
        // `as _`: the field types differ between glibc and musl (the lab's static build).
        tv_sec: (t / 1_000_000_000) as _,
        tv_nsec: (t % 1_000_000_000) as _,
    };
    // SAFETY: a valid timespec; the remainder pointer may be null for absolute sleeps.
    let err = unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
    match err {
        0 => Ok(true),
        libc::EINTR => Ok(false),
        e => Err(LiveError::Sys {
            call: "clock_nanosleep",
            source: std::io::Error::from_raw_os_error(e),
        }),
    }
}

/// How often [`sleep_until_or`] looks at its halt condition.
const HALT_POLL_NS: u64 = 50_000_000;

/// Sleeps until `target` (CLOCK_MONOTONIC ns), looking at `halt` every 50 ms; false when
/// halted (or when the clock cannot be slept on).
pub fn sleep_until_or(target: u64, halt: impl Fn() -> bool) -> bool {
    loop {
        if halt() {
            return false;
        }
        let now = mono();
        if now >= target {
            return true;
        }
        if sleep_until(target.min(now + HALT_POLL_NS)).is_err() {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_offset_turns_monotonic_into_wall_time() {
        let offset = super::wall_offset();
        let wall = super::now(libc::CLOCK_REALTIME) as i64;
        let from_mono = super::mono() as i64 + offset;
        // Read microseconds apart; a clock step in between is the only way to fail.
        assert!(
            (from_mono - wall).abs() < 50_000_000,
            "{from_mono} vs {wall}"
        );
    }
}
