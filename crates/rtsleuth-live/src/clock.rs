//! The clocks the detectors read and report in.

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

/// Sleeps until `t`, nanoseconds of CLOCK_MONOTONIC, on the absolute timer: a detector's
/// windows stay on their grid however late each sleep began. A signal may end it early.
pub fn sleep_until(t: u64) {
    let ts = libc::timespec {
        tv_sec: (t / 1_000_000_000) as libc::time_t,
        tv_nsec: (t % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a valid timespec; the remainder pointer may be null for absolute sleeps.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
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
