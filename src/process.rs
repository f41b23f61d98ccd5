//! This process's own figures, from Linux's `/proc/self` (each `None`
//! where there is none): CPU, resident memory and its peak, threads,
//! open descriptors, and the open-files limit. Every connection is a file
//! descriptor, and the soft limit many systems start a process with
//! (1,024) is far below the server's default `--max-connections`
//! (10,000); the hard limit usually is not. So `serve` raises its soft
//! limit to the hard one at start, and says so.

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

/// User + system CPU seconds of this process so far, threads included,
/// children not.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name (which may hold
    // spaces); utime and stime are the 12th and 13th, in clock ticks
    // (100 a second).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// The first number of a `/proc/self/status` line (`VmRSS`, `Threads`).
fn status_number(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// Resident memory now, in bytes.
pub fn rss_bytes() -> Option<u64> {
    status_number("VmRSS").map(|kib| kib * 1024)
}

/// The most resident memory so far (`VmHWM`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    status_number("VmHWM").map(|kib| kib * 1024)
}

pub fn threads() -> Option<u64> {
    status_number("Threads")
}

pub fn open_fds() -> Option<u64> {
    std::fs::read_dir("/proc/self/fd")
        .ok()
        .map(|d| d.count() as u64)
}
