//! Provider messages ⇄ canonical turns, for `record_turn(format=...)` and the module functions
//! `to_messages` / `from_messages`.
//!
//! Formats are named as in the core: `"anthropic"`, `"openai_chat"`, `"openai_responses"`,
//! `"gemini"`. Options are a dict of the core's `translate::Options` fields (all optional).
//!
//! Recording provider messages (`record_turn(..., format=...)`) is the core's
//! `Memory::record_message` / `record_messages`, which number Gemini's calls without ids.

use codeoid_core::canonical::Turn;
use codeoid_core::translate::{self, Backend, Format, Options, ToolSpec};
use codeoid_core::{Error, Result};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::boundary::{attached, detached};
use crate::convert;

/// The backend of `format` served by `provider` (default: the format's vendor) with `model`.
pub(crate) fn backend(
    format: &str,
    provider: Option<String>,
    model: Option<String>,
) -> Result<Backend> {
    let mut backend = Backend::new(format.parse::<Format>()?);
    if let Some(provider) = provider {
        backend = backend.with_provider(provider);
    }
    if let Some(model) = model {
        backend = backend.with_model(model);
    }
    Ok(backend)
}

/// Translation options from a dict of `translate::Options` fields.
pub(crate) fn options(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Options> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Options::default());
    };
    let value = convert::to_json(obj, "options")?;
    attached(obj.py(), || {
        parse_options(value, &Options::default(), "options")
    })
}

/// `value` as options of type `T`, refusing keys `T` does not have (serde's `default` would
/// silently ignore a misspelled option); `defaults` names the known keys.
pub(crate) fn parse_options<T>(value: Value, defaults: &T, what: &str) -> Result<T>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let known: Vec<String> = match serde_json::to_value(defaults) {
        Ok(Value::Object(map)) => map.keys().cloned().collect(),
        _ => Vec::new(),
    };
    if let Value::Object(map) = &value {
        if let Some(unknown) = map.keys().find(|k| !known.contains(k)) {
            return Err(Error::invalid_input(format!(
                "{what} has no option {unknown:?}; known options are {}",
                known.join(", ")
            )));
        }
    }
    serde_json::from_value(value).map_err(|e| {
        Error::invalid_input(format!(
            "{what}: {e}; known options are {}",
            known.join(", ")
        ))
    })
}

/// Canonical turns (dicts) as provider messages of `format`:
/// `{"messages": [...], "losses": [...]}`. Each loss says what was not carried unchanged.
#[pyfunction]
#[pyo3(signature = (turns, format, *, provider = None, model = None, options = None))]
pub(crate) fn to_messages<'py>(
    py: Python<'py>,
    turns: Vec<Bound<'py, PyAny>>,
    format: String,
    provider: Option<String>,
    model: Option<String>,
    options: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let turns = turns
        .iter()
        .enumerate()
        .map(|(i, t)| convert::turn(t, &format!("turns[{i}]")))
        .collect::<PyResult<Vec<Turn>>>()?;
    let options = self::options(options.as_ref())?;
    let out = attached(py, || {
        let backend = backend(&format, provider, model)?;
        translate::to_messages(&turns, &backend, &options)
    })?;
    let dict = PyDict::new(py);
    dict.set_item("messages", convert::to_py(py, &out.value)?)?;
    dict.set_item("losses", losses(py, &out.losses)?)?;
    Ok(dict)
}

/// Provider messages of `format` as canonical turns:
/// `{"system": str | None, "turns": [...], "losses": [...]}`.
#[pyfunction]
#[pyo3(signature = (messages, format, *, provider = None, model = None, options = None))]
pub(crate) fn from_messages<'py>(
    py: Python<'py>,
    messages: Bound<'py, PyAny>,
    format: String,
    provider: Option<String>,
    model: Option<String>,
    options: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let value = convert::to_json(&messages, "messages")?;
    let options = self::options(options.as_ref())?;
    let out = detached(py, move || {
        let backend = backend(&format, provider, model)?;
        translate::from_messages(&value, &backend, &options)
    })?;
    let dict = PyDict::new(py);
    dict.set_item("system", out.value.system.as_deref())?;
    dict.set_item("turns", turns_to_py(py, &out.value.turns)?)?;
    dict.set_item("losses", losses(py, &out.losses)?)?;
    Ok(dict)
}

/// Tool declarations (`[{"name", "description", "input_schema"}, ...]`, as
/// `Memory.tool_schemas()` returns them) in `format`'s shape for a request's `tools`:
/// `{"tools": ..., "losses": [...]}`. Gemini schemas are sanitized into the subset it accepts
/// (each change reported as a loss) unless `options={"gemini_json_schema": True}`.
#[pyfunction]
#[pyo3(signature = (tools, format, *, options = None))]
pub(crate) fn declare_tools<'py>(
    py: Python<'py>,
    tools: Bound<'py, PyAny>,
    format: String,
    options: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let value = convert::to_json(&tools, "tools")?;
    let options = self::options(options.as_ref())?;
    let specs: Vec<ToolSpec> = attached(py, || {
        serde_json::from_value(value).map_err(|e| {
            Error::invalid_input(format!(
                "tools: {e}; expected a list of {{\"name\", \"description\", \"input_schema\"}} \
                 dicts, as Memory.tool_schemas() returns"
            ))
        })
    })?;
    declarations(py, &specs, &format, &options)
}

/// `specs` declared in `format`'s shape: `{"tools": ..., "losses": [...]}`.
pub(crate) fn declarations<'py>(
    py: Python<'py>,
    specs: &[ToolSpec],
    format: &str,
    options: &Options,
) -> PyResult<Bound<'py, PyDict>> {
    let out = attached(py, || {
        translate::declare_tools(specs, format.parse::<Format>()?, options)
    })?;
    let dict = PyDict::new(py);
    dict.set_item("tools", convert::to_py(py, &out.value)?)?;
    dict.set_item("losses", losses(py, &out.losses)?)?;
    Ok(dict)
}

/// Canonical turns as a list of dicts.
pub(crate) fn turns_to_py<'py>(py: Python<'py>, turns: &[Turn]) -> PyResult<Bound<'py, PyAny>> {
    let value = attached(py, || {
        serde_json::to_value(turns)
            .map_err(|e| Error::internal("cannot serialize canonical turns").with_source(e))
    })?;
    convert::to_py(py, &value)
}

fn losses<'py>(py: Python<'py>, losses: &[translate::Loss]) -> PyResult<Bound<'py, PyAny>> {
    let value = attached(py, || {
        serde_json::to_value(losses)
            .map_err(|e| Error::internal("cannot serialize translation losses").with_source(e))
    })?;
    convert::to_py(py, &value)
}
