//! Locks without poisoning. A panic while a lock is held ends that task
//! (a load, a request) and is reported by it; the data behind the lock
//! stays usable by the others (a whole-value swap or a counter), so every
//! lock here is taken as if it were not poisoned.

use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn into_inner<T>(m: Mutex<T>) -> T {
    m.into_inner().unwrap_or_else(|e| e.into_inner())
}

pub fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

pub fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

pub fn rw_into_inner<T>(l: RwLock<T>) -> T {
    l.into_inner().unwrap_or_else(|e| e.into_inner())
}

pub fn wait<'a, T>(c: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    c.wait(g).unwrap_or_else(|e| e.into_inner())
}

/// [`Condvar::wait_timeout`], the guard only.
pub fn wait_timeout<'a, T>(c: &Condvar, g: MutexGuard<'a, T>, d: Duration) -> MutexGuard<'a, T> {
    c.wait_timeout(g, d).unwrap_or_else(|e| e.into_inner()).0
}
