//! The panic boundary: every exported function runs its body inside [`boundary`] (functions
//! returning `codeoid_error *`) or [`quiet`] (accessors and `_free` functions), so a panic in
//! codeoid or a dependency never unwinds into C, which would be undefined behaviour.
//!
//! A caught panic in a fallible function becomes an error with code `CODEOID_ERROR_PANIC` and
//! the panic's message; an infallible function returns its documented default (0, NULL, nothing).
//! The default panic hook still prints the panic to stderr, which is what a bug report needs.
//!
//! Tests force a panic through any exported function with `inject_panic_on_next_call`; the
//! hook is compiled only into test builds, so the shipped library has no way to panic on purpose.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::{Failure, FfiResult, codeoid_error};

/// Runs `body` and turns its outcome into what a fallible function returns: NULL on success, an
/// owned error otherwise, and a `CODEOID_ERROR_PANIC` error naming `function` if it panicked.
pub(crate) fn boundary(
    function: &'static str,
    body: impl FnOnce() -> FfiResult<()>,
) -> *mut codeoid_error {
    // The body only reads caller memory and shared, internally synchronized state (`Memory`
    // recovers poisoned locks), so observing it after a panic is sound.
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        injected_panic();
        body()
    }));
    match outcome {
        Ok(Ok(())) => std::ptr::null_mut(),
        Ok(Err(failure)) => failure.into_raw(),
        Err(payload) => Failure::panic(function, &payload_text(payload.as_ref())).into_raw(),
    }
}

/// Runs an infallible `body`, returning `default` if it panicked.
pub(crate) fn quiet<T>(default: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(|| {
        injected_panic();
        body()
    }))
    .unwrap_or(default)
}

/// The message of a panic payload (`panic!` gives a `&str` or a `String`).
fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

#[cfg(test)]
thread_local! {
    static PANIC_NEXT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes the next exported function called on this thread panic inside its boundary.
#[cfg(test)]
pub(crate) fn inject_panic_on_next_call() {
    PANIC_NEXT.with(|p| p.set(true));
}

#[cfg(test)]
fn injected_panic() {
    if PANIC_NEXT.with(|p| p.replace(false)) {
        panic!("injected by a test");
    }
}

#[cfg(not(test))]
#[inline(always)]
fn injected_panic() {}
