//! Hardware and firmware latency detection: time the CPU spends outside Linux (SMIs, a
//! hypervisor running another vCPU, EL2/EL3 firmware), the `black_hole` of `explain`.
//!
//! Where the kernel has the `hwlat` tracer it does the job with interrupts off ([`kernel`]);
//! elsewhere a SCHED_FIFO thread per CPU reads the clock in a loop ([`user`]). Both spin only
//! `width` of every `window`, and [`Settings::validate`] refuses settings that would spin into
//! RT throttling or leave no time to the rest of the machine.

mod gaps;
mod kernel;
mod kernel_output;
mod report;
mod result;
mod schedule;
mod settings;
mod tally;
mod user;
mod worst;

pub use kernel::{available_tracers, lists_hwlat};
pub use report::document;
pub use result::{CpuResult, Detection, Spike};
pub use settings::{Mode, Settings};

use crate::tracefs::Tracefs;
use crate::LiveError;
use std::sync::atomic::AtomicBool;

/// Runs the detector `mode` asks for until the duration ends or `stop` is set (the flag of a
/// [`crate::signals::Interrupt`]: Ctrl-C ends the run early, with a report).
pub fn detect(settings: &Settings, mode: Mode, stop: &AtomicBool) -> Result<Detection, LiveError> {
    settings.validate()?;
    if mode == Mode::User {
        return user::run(settings, stop);
    }
    let tracefs = Tracefs::open();
    let tracers = tracefs
        .as_ref()
        .map_err(|e| LiveError::Unsupported(e.to_string()))
        .and_then(|t| available_tracers(t.root()));
    match (choose(mode, tracers)?, tracefs) {
        (Mode::Kernel, Ok(tracefs)) => kernel::run(&tracefs, settings, stop),
        _ => user::run(settings, stop),
    }
}

/// The detector that runs: the kernel's where `available_tracers` lists it, unless the user
/// asked for user space; asking for the kernel's where it is missing is an error that says
/// what the kernel has instead.
pub fn choose(mode: Mode, tracers: Result<String, LiveError>) -> Result<Mode, LiveError> {
    match (mode, tracers) {
        (Mode::User, _) => Ok(Mode::User),
        (_, Ok(t)) if lists_hwlat(&t) => Ok(Mode::Kernel),
        (Mode::Auto, _) => Ok(Mode::User),
        (_, Ok(t)) => Err(LiveError::Unsupported(format!(
            "this kernel has no hwlat tracer (available_tracers: {t}); it needs \
             CONFIG_HWLAT_TRACER, or use --mode user"
        ))),
        (_, Err(e)) => Err(LiveError::Unsupported(format!(
            "cannot tell whether the kernel has the hwlat tracer: {e}; use --mode user"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_tracer_is_chosen_only_where_it_exists() {
        let with = || Ok("blk hwlat function nop".to_owned());
        let without = || Ok("blk function nop".to_owned());
        let unreadable = || Err(LiveError::NoTracefs("not mounted".into()));
        assert_eq!(choose(Mode::Auto, with()).unwrap(), Mode::Kernel);
        assert_eq!(choose(Mode::Kernel, with()).unwrap(), Mode::Kernel);
        assert_eq!(choose(Mode::User, with()).unwrap(), Mode::User);
        assert_eq!(choose(Mode::Auto, without()).unwrap(), Mode::User);
        assert_eq!(choose(Mode::Auto, unreadable()).unwrap(), Mode::User);
        let err = choose(Mode::Kernel, without()).unwrap_err().to_string();
        assert_eq!(
            err,
            "this kernel has no hwlat tracer (available_tracers: blk function nop); it needs \
             CONFIG_HWLAT_TRACER, or use --mode user"
        );
        let err = choose(Mode::Kernel, unreadable()).unwrap_err().to_string();
        assert!(err.contains("not mounted"), "{err}");
    }
}
