//! The C allocator's settings (glibc on Linux; nothing elsewhere): a fixed
//! mmap threshold from the start, and a trim threshold that is glibc's
//! default while a snapshot loads and higher while serving. Why each is
//! set as it is: docs/performance.md, "glibc's own mmap threshold".

/// Fixes glibc's mmap threshold (16 MiB). Left alone, glibc starts it at
/// 128 KiB and raises it (up to 32 MiB) each time a mapped block is
/// freed, so the RSS after a load depended on the order the load's
/// buffers happened to be freed in and changed from run to run. Fixed,
/// it is the same every time and lower, and the load as fast. Call it
/// before anything large is allocated.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if !glibc::set(glibc::M_MMAP_THRESHOLD, glibc::MMAP_THRESHOLD) {
        tracing::warn!("the allocator's mmap threshold could not be set");
    }
}

/// Runs a load with glibc's default trim threshold, hands the heap the
/// load freed (decoded rows, sort buffers: gigabytes at a million
/// accounts) back to the OS, which glibc would keep and the resident size
/// after a load count, then sets the serving trim threshold.
pub fn while_loading<T>(load: impl FnOnce() -> T) -> T {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::set(glibc::M_TRIM_THRESHOLD, glibc::LOADING_TRIM_THRESHOLD);
    let loaded = load();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        glibc::trim();
        glibc::set(glibc::M_TRIM_THRESHOLD, glibc::SERVING_TRIM_THRESHOLD);
    }
    loaded
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    pub const M_TRIM_THRESHOLD: i32 = -1;
    pub const M_MMAP_THRESHOLD: i32 = -3;

    /// Above it an allocation gets its own mapping: above the load's many
    /// buffers of a few MiB, and the few-MiB bodies of the largest answers
    /// (a hub's `taggedAs`), which a lower one would map and fault in
    /// afresh on every request.
    pub const MMAP_THRESHOLD: usize = 16 << 20;
    /// The free memory at the top of a heap arena kept instead of
    /// returned at once, while serving: twice the mmap threshold, glibc's
    /// own rule, which fixing that threshold turns off. Left at its
    /// 128 KiB, a hub's `taggedAs` body of a few MiB, freed when the cache
    /// replaced it, was returned and the next one faulted in afresh,
    /// which showed in the server CPU of every such request.
    pub const SERVING_TRIM_THRESHOLD: usize = 2 * MMAP_THRESHOLD;
    /// glibc's default, during a load: with the serving one, a load left
    /// more resident, even after `malloc_trim`.
    pub const LOADING_TRIM_THRESHOLD: usize = 128 << 10;

    extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
        fn malloc_trim(pad: usize) -> i32;
    }

    /// Sets a `mallopt` parameter; false if it was refused.
    pub fn set(param: i32, value: usize) -> bool {
        let value = i32::try_from(value).unwrap_or(i32::MAX);
        // SAFETY: mallopt only sets an allocator parameter; it has no
        // preconditions.
        unsafe { mallopt(param, value) == 1 }
    }

    /// Returns the arenas' free memory to the kernel.
    pub fn trim() {
        // SAFETY: malloc_trim only returns free memory of the allocator's
        // arenas to the kernel; it has no preconditions.
        unsafe {
            malloc_trim(0);
        }
    }
}
