//! The boundary every call into the core crosses: the GIL is released while codeoid works
//! (SQLite, the embedding model, a child process), and a panic is caught before it can reach
//! Python.
//!
//! Releasing the GIL is what lets a thread pool of `recall`s run in parallel: the core's
//! `Memory` is `Send + Sync` and does its own locking. The closure therefore must not touch
//! Python objects; callers extract arguments first and build Python results after.
//!
//! PyO3 would turn a panic into `pyo3_runtime.PanicException`, which derives from
//! `BaseException` and so escapes `except Exception`. A panic is a codeoid bug, so it becomes
//! `codeoid.InternalError` instead, with the panic message and a request to report it.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use codeoid_core::ErrorKind;
use pyo3::prelude::*;

use crate::errors;

/// Runs Python's signal handlers from code that released the GIL (Python runs them only when
/// asked, and only on the main thread): what one raised, such as `KeyboardInterrupt` for a
/// Ctrl-C, or `None`.
pub(crate) fn signal_raised() -> Option<PyErr> {
    Python::attach(|py| py.check_signals()).err()
}

/// A `keep_going` for core calls that wait (`flush`, `run`): answers `false` once a signal
/// handler raised ([`signal_raised`]), keeping the exception in `raised`.
pub(crate) fn until_signal(raised: &mut Option<PyErr>) -> impl FnMut() -> bool + Send + '_ {
    move || match signal_raised() {
        None => true,
        Some(err) => {
            *raised = Some(err);
            false
        }
    }
}

/// Runs `work` with the GIL released and maps its error (or panic) to the Python exception of
/// its kind.
pub(crate) fn detached<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> codeoid_core::Result<T> + Send,
{
    // `AssertUnwindSafe`: after a panic nothing the closure touched is used again except
    // through the core's own locks, which recover from poisoning.
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(work)));
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(errors::to_py(py, &err)),
        Err(payload) => Err(panicked(py, payload.as_ref())),
    }
}

/// Runs `work` (quick, pure Rust) without releasing the GIL, still behind the panic boundary.
pub(crate) fn attached<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    F: FnOnce() -> codeoid_core::Result<T>,
{
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(errors::to_py(py, &err)),
        Err(payload) => Err(panicked(py, payload.as_ref())),
    }
}

fn panicked(py: Python<'_>, payload: &(dyn Any + Send)) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    errors::new_err(
        py,
        ErrorKind::Internal,
        format!(
            "codeoid panicked: {what}; this is a bug, please report it with the call that caused it"
        ),
    )
}

/// Panics inside [`detached`] with `message`: proves to the tests that a panic surfaces as
/// `InternalError` (catchable with `except Exception`), not `PanicException`.
#[pyfunction]
pub(crate) fn _panic(py: Python<'_>, message: String) -> PyResult<()> {
    detached(py, move || -> codeoid_core::Result<()> {
        panic!("{message}")
    })
}
