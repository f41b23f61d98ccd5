//! The open-files limit. Every connection is a file descriptor, and the
//! soft limit many systems start a process with (1,024) is far below the
//! server's default `--max-connections` (10,000); the hard limit usually
//! is not. So `serve` raises its soft limit to the hard one at start, and
//! says so.

/// `struct rlimit` (Linux, 64-bit `rlim_t`).
#[repr(C)]
struct Limit {
    soft: u64,
    hard: u64,
}

/// `RLIMIT_NOFILE` on Linux.
const NOFILE: i32 = 7;

extern "C" {
    fn getrlimit(resource: i32, limit: *mut Limit) -> i32;
    fn setrlimit(resource: i32, limit: *const Limit) -> i32;
}

/// (soft, hard) open-files limits now.
pub fn open_files() -> Option<(u64, u64)> {
    let mut l = Limit { soft: 0, hard: 0 };
    // SAFETY: getrlimit writes one `struct rlimit` through a valid pointer.
    (unsafe { getrlimit(NOFILE, &mut l) } == 0).then_some((l.soft, l.hard))
}

/// Raises the soft open-files limit to the hard one; logs what it did.
/// Returns the soft limit in force afterwards.
pub fn raise_open_files() -> Option<u64> {
    let (soft, hard) = open_files()?;
    if soft >= hard {
        tracing::info!(limit = soft, "open-files limit");
        return Some(soft);
    }
    let l = Limit { soft: hard, hard };
    // SAFETY: setrlimit reads one `struct rlimit` through a valid pointer.
    if unsafe { setrlimit(NOFILE, &l) } == 0 {
        tracing::info!(
            from = soft,
            to = hard,
            "open-files limit raised to the hard limit"
        );
        Some(hard)
    } else {
        tracing::warn!(
            limit = soft,
            hard,
            "cannot raise the open-files limit: connections beyond it are refused"
        );
        Some(soft)
    }
}
