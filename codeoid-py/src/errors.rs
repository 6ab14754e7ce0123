//! The one place where core [`ErrorKind`]s become Python exceptions.
//!
//! `codeoid.CodeoidError` is the root; every kind gets one subclass whose class attribute `code`
//! is [`ErrorKind::code`] (stable, shared with the C ABI) and `kind` is [`ErrorKind::name`].
//! Some kinds also derive from the builtin exception a Python caller would naturally catch
//! (`InvalidInputError` is a `ValueError`, `NotFoundError` a `LookupError`, `IoError` an
//! `OSError`, `BusyError` a `TimeoutError`), so `except ValueError` keeps working around codeoid.
//!
//! The classes are built once, at module import, with `type(name, bases, namespace)`, because a
//! class with two bases cannot be declared with `create_exception!`. `class_spec` below is the
//! table; `tests/test_errors.py` proves that every entry of [`ErrorKind::ALL`] maps.
//!
//! Nothing here raises a bare `Exception`: argument type mistakes are `TypeError` (from PyO3's
//! extraction or [`crate::convert`]), malformed values are `InvalidInputError`, and a panic in
//! codeoid (a bug) is turned into `InternalError` by [`crate::boundary`].

use codeoid_core::{Error, ErrorKind};
use pyo3::exceptions::{PyException, PyLookupError, PyOSError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::convert::Count;

pyo3::create_exception!(
    codeoid,
    CodeoidError,
    PyException,
    "Root of every error codeoid raises. `code` is the stable numeric code of the kind (0 on this \
     root class, which is never raised itself); `kind` its snake_case name."
);

/// A builtin exception a kind's class also derives from.
#[derive(Clone, Copy)]
enum Builtin {
    Value,
    Lookup,
    Os,
    Timeout,
}

/// How one kind appears in Python: class name, extra builtin base, docstring.
fn class_spec(kind: ErrorKind) -> (String, Option<Builtin>, &'static str) {
    let (name, also, doc) = match kind {
        ErrorKind::InvalidInput => (
            "InvalidInputError",
            Some(Builtin::Value),
            "A malformed argument: bad JSON, an unknown role, an empty id, an out-of-range value, \
             a tool call with wrong arguments, or a method called on a closed Memory.",
        ),
        ErrorKind::NotFound => (
            "NotFoundError",
            Some(Builtin::Lookup),
            "A session, episode, blob or file that does not exist (in this workspace).",
        ),
        ErrorKind::AlreadyExists => (
            "AlreadyExistsError",
            None,
            "The thing to create already exists with different contents.",
        ),
        ErrorKind::Database => (
            "DatabaseError",
            None,
            "SQLite reported a failure that no more specific kind describes.",
        ),
        ErrorKind::Busy => (
            "BusyError",
            Some(Builtin::Timeout),
            "Another process kept the store locked for longer than the busy timeout.",
        ),
        ErrorKind::Corrupt => (
            "CorruptError",
            None,
            "The file is not a codeoid store: corrupt, truncated, or another application's.",
        ),
        ErrorKind::SchemaTooNew => (
            "SchemaTooNewError",
            None,
            "The store was written by a newer codeoid; upgrade this package.",
        ),
        ErrorKind::Io => (
            "IoError",
            Some(Builtin::Os),
            "A filesystem operation failed: missing directory, permission denied, read-only volume.",
        ),
        ErrorKind::ModelUnavailable => (
            "ModelUnavailableError",
            None,
            "No embedding model could be found or downloaded.",
        ),
        ErrorKind::Model => (
            "ModelError",
            None,
            "An embedding model was found but could not be loaded or run.",
        ),
        ErrorKind::Translation => (
            "TranslationError",
            None,
            "A conversation cannot be expressed in the requested provider format.",
        ),
        ErrorKind::Import => (
            // Not `ImportError`: that would shadow the builtin of the same name.
            "LogImportError",
            None,
            "A session log could not be imported as a whole.",
        ),
        ErrorKind::RotationRefused => (
            "RotationRefusedError",
            None,
            "A rotation was requested but the policy refuses it; the message says why.",
        ),
        ErrorKind::Internal => (
            "InternalError",
            None,
            "A bug in codeoid: an invariant did not hold. Please report it.",
        ),
        // `ErrorKind` is non-exhaustive: a kind added to the core gets a class named after it
        // until this table gives it a docstring (and the stubs a line; stubtest notices).
        _ => {
            return (
                format!("{}Error", camel_case(kind.name())),
                None,
                "An error kind this version of the bindings does not describe yet.",
            );
        }
    };
    (name.to_string(), also, doc)
}

/// `schema_too_new` -> `SchemaTooNew`.
fn camel_case(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// The class of each kind, in [`ErrorKind::ALL`] order, created on first use.
static CLASSES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&Vec<Py<PyType>>> {
    CLASSES.get_or_try_init(py, || {
        let builtins = py.import("builtins")?;
        let make_type = builtins.getattr("type")?;
        let root = py.get_type::<CodeoidError>();
        root.setattr("code", 0)?;
        root.setattr("kind", "codeoid")?;
        let mut out = Vec::with_capacity(ErrorKind::ALL.len());
        for kind in ErrorKind::ALL {
            let (name, also, doc) = class_spec(kind);
            let bases = match also {
                None => PyTuple::new(py, [root.clone()])?,
                Some(builtin) => {
                    let extra = match builtin {
                        Builtin::Value => py.get_type::<PyValueError>(),
                        Builtin::Lookup => py.get_type::<PyLookupError>(),
                        Builtin::Os => py.get_type::<PyOSError>(),
                        Builtin::Timeout => py.get_type::<PyTimeoutError>(),
                    };
                    PyTuple::new(py, [root.clone(), extra])?
                }
            };
            let namespace = PyDict::new(py);
            namespace.set_item("code", kind.code())?;
            namespace.set_item("kind", kind.name())?;
            namespace.set_item("__doc__", doc)?;
            namespace.set_item("__module__", "codeoid")?;
            let class = make_type.call1((name, bases, namespace))?;
            out.push(class.cast_into::<PyType>()?.unbind());
        }
        Ok(out)
    })
}

/// The Python class of `kind`.
pub(crate) fn class_of(py: Python<'_>, kind: ErrorKind) -> PyResult<Bound<'_, PyType>> {
    let classes = classes(py)?;
    let index = ErrorKind::ALL
        .iter()
        .position(|k| *k == kind)
        .or_else(|| {
            ErrorKind::ALL
                .iter()
                .position(|k| *k == ErrorKind::Internal)
        })
        .unwrap_or(0);
    match classes.get(index) {
        Some(class) => Ok(class.bind(py).clone()),
        None => Ok(py.get_type::<CodeoidError>()),
    }
}

/// A core error as the Python exception of its kind, with the whole cause chain in the message.
pub(crate) fn to_py(py: Python<'_>, err: &Error) -> PyErr {
    new_err(py, err.kind(), err.full_message())
}

/// An exception of `kind` with `message`.
pub(crate) fn new_err(py: Python<'_>, kind: ErrorKind, message: String) -> PyErr {
    match class_of(py, kind) {
        Ok(class) => PyErr::from_type(class, message),
        Err(creating) => creating,
    }
}

/// An `InvalidInputError` (a `ValueError`) with `message`.
pub(crate) fn invalid_input(py: Python<'_>, message: impl Into<String>) -> PyErr {
    new_err(py, ErrorKind::InvalidInput, message.into())
}

/// Adds the root and every kind's class to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("CodeoidError", py.get_type::<CodeoidError>())?;
    for class in classes(py)? {
        let class = class.bind(py);
        module.add(class.name()?, class)?;
    }
    Ok(())
}

/// `[(name, code, class), ...]` for every kind of [`ErrorKind::ALL`], in code order.
#[pyfunction]
pub(crate) fn error_kinds(py: Python<'_>) -> PyResult<Vec<(&'static str, u32, Bound<'_, PyType>)>> {
    ErrorKind::ALL
        .iter()
        .map(|kind| Ok((kind.name(), kind.code(), class_of(py, *kind)?)))
        .collect()
}

/// Raises the exception of the kind with `code`, carrying `message`, as the core would: the
/// conversion path of every real error, exposed so the tests can prove each kind maps.
#[pyfunction]
pub(crate) fn _raise_error(py: Python<'_>, code: Count, message: &str) -> PyResult<()> {
    let code = code.0;
    match u32::try_from(code).ok().and_then(ErrorKind::from_code) {
        Some(kind) => Err(to_py(py, &Error::new(kind, message))),
        None => Err(invalid_input(
            py,
            format!("no error kind has code {code}; see codeoid.error_kinds()"),
        )),
    }
}
