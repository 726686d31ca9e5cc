//! Scheduling of the calling thread: CPU affinity and real-time policy.
//!
//! These change only the calling thread, so a measuring or detecting thread that ends takes its
//! policy with it: nothing can outlive the process at SCHED_FIFO.

use crate::LiveError;

/// A real-time (or normal) scheduling policy, as `--policy` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Fifo,
    Rr,
    Other,
}

impl Policy {
    fn raw(self) -> libc::c_int {
        match self {
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::Rr => libc::SCHED_RR,
            Policy::Other => libc::SCHED_OTHER,
        }
    }

    /// The name as `chrt` and the JSON print it.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Other => "other",
        }
    }
}

impl std::str::FromStr for Policy {
    type Err = LiveError;

    fn from_str(text: &str) -> Result<Policy, LiveError> {
        match text.to_ascii_lowercase().as_str() {
            "fifo" | "sched_fifo" => Ok(Policy::Fifo),
            "rr" | "sched_rr" => Ok(Policy::Rr),
            "other" | "normal" | "sched_other" => Ok(Policy::Other),
            _ => Err(LiveError::Invalid(format!(
                "unknown policy {text:?} (fifo, rr or other)"
            ))),
        }
    }
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> Result<(), LiveError> {
    pin_current_thread_to(&[cpu])
}

/// Lets the calling thread (and the threads it starts later) run only on `cpus`.
pub fn pin_current_thread_to(cpus: &[usize]) -> Result<(), LiveError> {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays inside it for cpu < CPU_SETSIZE, checked.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            if cpu >= libc::CPU_SETSIZE as usize {
                return Err(LiveError::Invalid(format!(
                    "CPU {cpu} is beyond CPU_SETSIZE"
                )));
            }
            libc::CPU_SET(cpu, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(LiveError::last_os("sched_setaffinity"));
        }
    }
    Ok(())
}

/// A `sched_param` holding only `priority`. musl's struct carries sporadic-server fields that
/// glibc's does not, so it is zeroed first rather than written field by field (the lab runs a
/// static musl build).
fn sched_param(priority: libc::c_int) -> libc::sched_param {
    // SAFETY: sched_param is plain integers, for which all-zero is a valid value.
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = priority;
    param
}

/// Gives the calling thread `policy` at `prio` (ignored, and 0, for `Other`).
pub fn set_current_thread_policy(policy: Policy, prio: u32) -> Result<(), LiveError> {
    let param = sched_param(if policy == Policy::Other {
        0
    } else {
        prio as libc::c_int
    });
    // SAFETY: plain system call on the calling thread (pid 0) with a valid parameter struct.
    // The system call, not libc's wrapper: musl's wrappers of the sched_*scheduler/param family
    // are stubs that fail with ENOSYS (POSIX defines them per process, Linux per thread), and
    // the lab runs a static musl build.
    let param_ptr: *const libc::sched_param = &param;
    if unsafe { libc::syscall(libc::SYS_sched_setscheduler, 0, policy.raw(), param_ptr) } == 0 {
        return Ok(());
    }
    let source = std::io::Error::last_os_error();
    if source.raw_os_error() == Some(libc::EPERM) {
        return Err(LiveError::Unsupported(format!(
            "cannot run at SCHED_{} {prio} ({source}): real-time policies need root or CAP_SYS_NICE",
            policy.name().to_ascii_uppercase()
        )));
    }
    Err(LiveError::Sys {
        call: "sched_setscheduler",
        source,
    })
}

/// The calling thread's policy as the kernel numbers it (`SCHED_RESET_ON_FORK` cleared) and its
/// priority. System calls, not libc, for the reason given in [`set_current_thread_policy`].
pub(crate) fn current_thread_policy() -> Result<(libc::c_int, libc::c_int), LiveError> {
    // SAFETY: plain queries on the calling thread; sched_getparam fills the struct we own.
    let raw = unsafe { libc::syscall(libc::SYS_sched_getscheduler, 0) };
    if raw < 0 {
        return Err(LiveError::last_os("sched_getscheduler"));
    }
    let mut param = sched_param(0);
    let param_ptr: *mut libc::sched_param = &mut param;
    if unsafe { libc::syscall(libc::SYS_sched_getparam, 0, param_ptr) } != 0 {
        return Err(LiveError::last_os("sched_getparam"));
    }
    Ok((
        raw as libc::c_int & !libc::SCHED_RESET_ON_FORK,
        param.sched_priority,
    ))
}

/// The calling thread's kernel thread id, as traces print it.
pub fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}
