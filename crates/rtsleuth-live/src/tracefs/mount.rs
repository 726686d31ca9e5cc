//! Finding tracefs, or mounting it when nobody has.

use crate::LiveError;
use std::path::{Path, PathBuf};

/// Where tracefs is conventionally mounted, newest convention first.
pub(crate) const MOUNT_POINTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The tracefs mount point a `/proc/mounts` text lists: the conventional one when it is
/// mounted there (tracefs is often mounted twice), else the first.
pub(crate) fn pick_mount(mounts: &str) -> Option<&str> {
    let mounted: Vec<&str> = mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, dir, fstype) = (f.next()?, f.next()?, f.next()?);
            (fstype == "tracefs").then_some(dir)
        })
        .collect();
    let preferred = MOUNT_POINTS.iter().find(|p| mounted.contains(p)).copied();
    preferred.or(mounted.first().copied())
}

/// A usable tracefs mount. If rtsleuth mounted it, dropping the value unmounts it again.
pub struct Tracefs {
    root: PathBuf,
    mounted_here: bool,
}

impl Tracefs {
    /// The mounted tracefs; if none is mounted, mounts one at `/sys/kernel/tracing` and reports
    /// that it did through [`Tracefs::mounted_here`].
    pub fn open() -> Result<Tracefs, LiveError> {
        if let Some(root) = Self::find_mounted()? {
            return Ok(Tracefs {
                root,
                mounted_here: false,
            });
        }
        let root = PathBuf::from(MOUNT_POINTS[0]);
        let target = std::ffi::CString::new(MOUNT_POINTS[0]).expect("no NUL in a constant");
        // SAFETY: all pointers are valid NUL-terminated strings; data may be null for tracefs.
        let rc = unsafe {
            libc::mount(
                c"nodev".as_ptr(),
                target.as_ptr(),
                c"tracefs".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            return Err(LiveError::NoTracefs(format!(
                "not mounted, and mounting it at {} failed: {err} (run as root, or mount it: \
                 mount -t tracefs nodev {})",
                MOUNT_POINTS[0], MOUNT_POINTS[0]
            )));
        }
        Ok(Tracefs {
            root,
            mounted_here: true,
        })
    }

    /// A tracefs that is already mounted, if there is one.
    pub fn find_mounted() -> Result<Option<PathBuf>, LiveError> {
        let mounts = std::fs::read_to_string("/proc/mounts")
            .map_err(|e| LiveError::file("/proc/mounts", e))?;
        Ok(pick_mount(&mounts).map(PathBuf::from))
    }

    /// Uses a tracefs mounted at `root` (tests and unusual mounts).
    pub fn at(root: impl Into<PathBuf>) -> Tracefs {
        Tracefs {
            root: root.into(),
            mounted_here: false,
        }
    }

    /// The mount point.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether rtsleuth mounted it (and will unmount it when done).
    pub fn mounted_here(&self) -> bool {
        self.mounted_here
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if self.mounted_here {
            if let Ok(target) = std::ffi::CString::new(self.root.as_os_str().as_encoded_bytes()) {
                // SAFETY: a valid NUL-terminated path; failure leaves a harmless mount behind.
                unsafe { libc::umount(target.as_ptr()) };
            }
        }
    }
}
