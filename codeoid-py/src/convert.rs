//! Python values ⇄ JSON, the canonical types built from JSON (turns, usage), and the argument
//! types PyO3's own conversions get wrong for us (counts, datetimes in any timezone, path
//! lists).
//!
//! Provider messages and canonical turns cross the boundary as plain dicts and lists. They are
//! converted to `serde_json::Value` here, with errors that name the offending place the way a
//! Python programmer would write it (`turn['parts'][1]['input']`):
//! - a value of a type JSON cannot hold (bytes, a set, an object) is a `TypeError`;
//! - a `str` that is not valid Unicode (a lone surrogate), an integer outside 64 bits, a NaN or
//!   an infinity, or nesting deeper than [`MAX_DEPTH`] is an `InvalidInputError` (a
//!   `ValueError`). The depth limit also stops self-referencing lists from recursing forever.
//!
//! Reading JSON back into Python never fails on shape: every `Value` has a Python form.

use chrono::{DateTime, Utc};
use codeoid_core::canonical::{Part, Turn, Usage};
use codeoid_core::translate::{Format, read_usage};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDateTime, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::errors;
use crate::repr::Repr;

/// Deepest nesting accepted from Python (serde_json's own parser stops at 128 too).
pub(crate) const MAX_DEPTH: usize = 128;

/// `obj` as JSON; `what` names it in errors (`"turn"`, `"messages"`).
pub(crate) fn to_json(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    let mut path = what.to_string();
    convert(obj, &mut path, 0)
}

fn convert(obj: &Bound<'_, PyAny>, path: &mut String, depth: usize) -> PyResult<Value> {
    let py = obj.py();
    if depth > MAX_DEPTH {
        return Err(errors::invalid_input(
            py,
            format!(
                "{path} is nested deeper than {MAX_DEPTH} levels; JSON values must be shallower (is a list inside itself?)"
            ),
        ));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(n) = obj.extract::<i64>() {
            return Ok(Value::Number(n.into()));
        }
        if let Ok(n) = obj.extract::<u64>() {
            return Ok(Value::Number(n.into()));
        }
        return Err(errors::invalid_input(
            py,
            format!(
                "{path} is an integer outside the 64-bit range; JSON numbers here must fit in 64 bits"
            ),
        ));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let value = f.value();
        return Number::from_f64(value).map(Value::Number).ok_or_else(|| {
            errors::invalid_input(
                py,
                format!("{path} is {value}; JSON has no NaN or infinity"),
            )
        });
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(text(s, path)?));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(dict.len());
        for (key, value) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "{path} has a key of type {}; JSON object keys must be str",
                    type_name(&key)
                )));
            };
            let key = text(key, path)?;
            let len = path.len();
            path.push_str(&format!("[{}]", key.repr()));
            let value = convert(&value, path, depth + 1)?;
            path.truncate(len);
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    let items: Option<Vec<Bound<'_, PyAny>>> = if let Ok(list) = obj.cast::<PyList>() {
        Some(list.iter().collect())
    } else if let Ok(tuple) = obj.cast::<PyTuple>() {
        Some(tuple.iter().collect())
    } else {
        None
    };
    if let Some(items) = items {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            out.push(convert(item, path, depth + 1)?);
            path.truncate(len);
        }
        return Ok(Value::Array(out));
    }
    let hint = if obj.is_instance_of::<pyo3::types::PyBytes>() {
        " (decode bytes to str first)"
    } else {
        ""
    };
    Err(PyTypeError::new_err(format!(
        "{path} is {}; expected a JSON value: dict, list, tuple, str, int, float, bool or None{hint}",
        type_name(obj)
    )))
}

/// A Python `str` as Rust text, or an `InvalidInputError` naming `path` when it holds a lone
/// surrogate (which UTF-8 cannot encode).
pub(crate) fn text(s: &Bound<'_, PyString>, path: &str) -> PyResult<String> {
    match s.to_str() {
        Ok(text) => Ok(text.to_owned()),
        Err(_) => Err(errors::invalid_input(
            s.py(),
            format!(
                "{path} is not valid Unicode (it holds a lone surrogate); pass text that encodes to UTF-8"
            ),
        )),
    }
}

/// The name of `obj`'s type, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an unknown type".to_string())
}

/// `value` as a Python object: dicts, lists, str, int, float, bool and None.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// A canonical turn from its dict form (see `docs/canonical-turns.md`), validated.
pub(crate) fn turn(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Turn> {
    let py = obj.py();
    if !obj.is_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err(format!(
            "{what} is {}; expected a dict such as {{\"role\": \"user\", \"parts\": [{{\"type\": \"text\", \"text\": \"...\"}}]}}",
            type_name(obj)
        )));
    }
    let value = to_json(obj, what)?;
    turn_from_json(py, value, what)
}

/// A canonical turn from JSON already converted, validated; errors name the part at fault.
pub(crate) fn turn_from_json(py: Python<'_>, value: Value, what: &str) -> PyResult<Turn> {
    let diagnosis = diagnose_parts(&value, what);
    let turn: Turn = serde_json::from_value(value).map_err(|e| {
        let detail = diagnosis.unwrap_or_else(|| format!("{what}: {e}"));
        errors::invalid_input(
            py,
            format!(
                "{detail}; a canonical turn is a dict with \"role\" (\"user\" or \"assistant\") \
                 and \"parts\" (a list of {{\"type\": ...}} dicts), see docs/canonical-turns.md"
            ),
        )
    })?;
    turn.validate().map_err(|e| {
        errors::invalid_input(
            py,
            format!("{what} is not a valid turn: {}", e.full_message()),
        )
    })?;
    Ok(turn)
}

/// The first part of `value["parts"]` that does not parse, described with its index; serde's
/// own message for a whole turn does not say which part failed.
fn diagnose_parts(value: &Value, what: &str) -> Option<String> {
    let parts = value.get("parts")?.as_array()?;
    parts.iter().enumerate().find_map(|(i, part)| {
        serde_json::from_value::<Part>(part.clone())
            .err()
            .map(|e| format!("{what}['parts'][{i}]: {e}"))
    })
}

/// Token usage from a dict: the canonical `{"calls": [...]}` or one call's counts, or, with
/// `format` (a format name; an unknown one is reported by whoever parses it), that provider's
/// own usage object (see `codeoid_core::translate::read_usage`).
pub(crate) fn usage(obj: &Bound<'_, PyAny>, format: Option<&str>) -> PyResult<Usage> {
    let py = obj.py();
    if !obj.is_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err(format!(
            "usage is {}; expected a dict such as {{\"input_tokens\": 1200, \"output_tokens\": 80}}",
            type_name(obj)
        )));
    }
    let value = to_json(obj, "usage")?;
    let format = format.and_then(|f| f.parse::<Format>().ok());
    read_usage(&value, format).map_err(|e| errors::invalid_input(py, e.message().to_owned()))
}

/// A `datetime` argument in any timezone (`timezone.utc`, a fixed offset, a `ZoneInfo`), as
/// the instant it names in UTC. A naive `datetime` (no `tzinfo`) is a `TypeError`, as Python
/// makes comparing it with an aware one: which instant it means depends on a zone it does not
/// name. Anything else is a `TypeError` too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AwareTime(pub(crate) DateTime<Utc>);

impl<'a, 'py> FromPyObject<'a, 'py> for AwareTime {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<AwareTime> {
        let py = obj.py();
        if !obj.is_instance_of::<PyDateTime>() {
            return Err(PyTypeError::new_err(format!(
                "expected a datetime, got {}",
                type_name(&obj)
            )));
        }
        if obj.call_method0("utcoffset")?.is_none() {
            return Err(PyTypeError::new_err(format!(
                "{} has no timezone; pass an aware datetime, such as datetime.now(timezone.utc)",
                obj.repr().map(|r| r.to_string()).unwrap_or_default()
            )));
        }
        let utc = py.import("datetime")?.getattr("timezone")?.getattr("utc")?;
        let in_utc = obj.call_method1("astimezone", (utc,))?;
        Ok(AwareTime(in_utc.extract::<DateTime<Utc>>()?))
    }
}

/// A list of file paths: any iterable of `str` except a single `str`.
///
/// PyO3's own `Vec<String>` extraction refuses a `str` with "Can't extract `str` to `Vec`", which
/// does not say what to pass. This raises `TypeError` naming the fix for a lone `str` (or
/// `bytes`), and for an item that is not a `str`, its index and type; an item holding a lone
/// surrogate is an `InvalidInputError`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct PathList(pub(crate) Vec<String>);

impl<'a, 'py> FromPyObject<'a, 'py> for PathList {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<PathList> {
        if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(format!(
                "expected a list of str paths, got one {}; pass [{}]",
                type_name(&obj),
                obj.repr().map(|r| r.to_string()).unwrap_or_default()
            )));
        }
        let items = obj.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "expected a list of str paths, got {}",
                type_name(&obj)
            ))
        })?;
        let mut paths = Vec::new();
        for (index, item) in items.enumerate() {
            let item = item?;
            let Ok(path) = item.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "path [{index}] is {}, expected a str",
                    type_name(&item)
                )));
            };
            paths.push(text(path, &format!("path [{index}]"))?);
        }
        Ok(PathList(paths))
    }
}

/// A non-negative integer argument (a count, an offset, a sequence number, a size).
///
/// PyO3's own `u64` extraction raises `OverflowError` for `-1`, which is neither the `TypeError`
/// nor the `ValueError` a caller checks for. This raises `TypeError` for a value that is not an
/// `int` (or is a `bool`), and `InvalidInputError` (a `ValueError`) for a negative or too large
/// one; PyO3 adds a note naming the argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Count(pub(crate) u64);

impl<'a, 'py> FromPyObject<'a, 'py> for Count {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Count> {
        if !obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
            return Err(PyTypeError::new_err(format!(
                "expected a non-negative int, got {}",
                type_name(&obj)
            )));
        }
        match obj.extract::<u64>() {
            Ok(n) => Ok(Count(n)),
            Err(_) => {
                let negative = obj.lt(0).unwrap_or(false);
                Err(errors::invalid_input(
                    obj.py(),
                    format!(
                        "{} is out of range; expected {}",
                        obj.repr().map(|r| r.to_string()).unwrap_or_default(),
                        if negative {
                            "a non-negative integer (the argument's own range applies too)"
                        } else {
                            "an integer below 2**64"
                        }
                    ),
                ))
            }
        }
    }
}

impl Count {
    /// The value as a `u32`, or an `InvalidInputError` naming `what`.
    pub(crate) fn to_u32(self, py: Python<'_>, what: &str) -> PyResult<u32> {
        u32::try_from(self.0).map_err(|_| {
            errors::invalid_input(
                py,
                format!("{what} {} is too large; at most {}", self.0, u32::MAX),
            )
        })
    }

    /// The value as a `usize`, or an `InvalidInputError` naming `what`.
    pub(crate) fn to_usize(self, py: Python<'_>, what: &str) -> PyResult<usize> {
        usize::try_from(self.0).map_err(|_| {
            errors::invalid_input(
                py,
                format!("{what} {} is too large for this platform", self.0),
            )
        })
    }
}
