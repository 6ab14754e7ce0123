//! Provider messages ⇄ canonical turns, for `record_turn(format=...)` and the module functions
//! `to_messages` / `from_messages`.
//!
//! Formats are named as in the core: `"anthropic"`, `"openai_chat"`, `"openai_responses"`,
//! `"gemini"`. Options are a dict of the core's `translate::Options` fields (all optional).
//!
//! Recording one provider message at a time needs one repair the core's list translator does
//! not: Gemini may send `functionCall`s without ids, and the reader then numbers them by their
//! position in the list it was given, which for a single message always starts at 0. A model
//! message's generated ids are therefore renumbered with the session's turn sequence number
//! (unique within the session), and a `functionResponse` without an id is read together with
//! the session's latest assistant turn so it pairs with that turn's call by name, as Gemini
//! intends. A message list's generated ids (`gemini_call_{content}_{part}`, calls and the
//! responses paired with them) get the session's turn count in front, so two lists never
//! number two calls alike. Recording provider messages holds one lock from reading that count to
//! writing the turns, so threads recording into one session cannot read the same count.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, PoisonError};

use codeoid_core::canonical::{Part, Role, Turn};
use codeoid_core::memory::Memory;
use codeoid_core::translate::{self, Backend, Format, Options, ToolSpec};
use codeoid_core::{Error, Result};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::boundary::{attached, detached};
use crate::convert;

/// The prefix of the ids the Gemini reader gives calls without one.
const GEMINI_GENERATED: &str = "gemini_call_";

/// The prefix the Gemini reader gives calls without an id in a one-message list.
const GEMINI_GENERATED_PREFIX: &str = "gemini_call_0_";

/// Held from reading a session's turn count to recording the turns numbered with it.
static RECORDING: Mutex<()> = Mutex::new(());

/// The lock for recording provider messages (see the module docs).
pub(crate) fn recording_lock() -> MutexGuard<'static, ()> {
    RECORDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Assistant turns looked at, backwards, for the call a Gemini response answers.
const GEMINI_CONTEXT_SCAN: u64 = 16;

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

/// The one canonical turn that one provider message of session `session_id` translates to.
pub(crate) fn message_turn(
    memory: &Memory,
    session_id: &str,
    message: Value,
    backend: &Backend,
) -> Result<Turn> {
    let options = Options::default();
    let turns = if backend.format == Format::Gemini {
        gemini_turns(memory, session_id, message, backend, &options)?
    } else {
        translate::from_messages(&Value::Array(vec![message]), backend, &options)?
            .value
            .turns
    };
    let count = turns.len();
    let mut turns = turns.into_iter();
    match (turns.next(), count) {
        (Some(turn), 1) => Ok(turn),
        (_, 0) => Err(Error::invalid_input(format!(
            "the {} message holds nothing to record (no content codeoid keeps); skip it or \
             record a canonical turn",
            backend.format
        ))),
        _ => Err(Error::invalid_input(format!(
            "the {} message translates to {count} turns; record it with record_turns(..., \
             format={:?})",
            backend.format,
            backend.format.name()
        ))),
    }
}

/// The canonical turns a provider message list of session `session_id` translates to, with
/// Gemini's generated ids made unique within the session (see the module docs).
pub(crate) fn message_list_turns(
    memory: &Memory,
    session_id: &str,
    messages: &Value,
    backend: &Backend,
) -> Result<Vec<Turn>> {
    let mut turns = translate::from_messages(messages, backend, &Options::default())?
        .value
        .turns;
    if backend.format == Format::Gemini {
        let count = memory.session(session_id)?.turn_count;
        // Ids the messages carry themselves stay as they are.
        let given: HashSet<&str> = messages
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m.get("parts")?.as_array())
            .flatten()
            .filter_map(|p| p.get("functionCall").or_else(|| p.get("functionResponse")))
            .filter_map(|inner| inner.get("id")?.as_str())
            .collect();
        let renumber = |id: &mut String| {
            let generated = !given.contains(id.as_str())
                && id.strip_prefix(GEMINI_GENERATED).is_some_and(|rest| {
                    rest.split_once('_').is_some_and(|(c, p)| {
                        [c, p]
                            .iter()
                            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    })
                });
            if generated {
                id.insert_str(GEMINI_GENERATED.len(), &format!("{count}_"));
            }
        };
        for part in turns.iter_mut().flat_map(|t| t.parts.iter_mut()) {
            match part {
                Part::ToolCall(call) => renumber(&mut call.id),
                Part::ToolResult(result) => renumber(&mut result.call_id),
                _ => {}
            }
        }
    }
    Ok(turns)
}

fn gemini_turns(
    memory: &Memory,
    session_id: &str,
    message: Value,
    backend: &Backend,
    options: &Options,
) -> Result<Vec<Turn>> {
    let session = memory.session(session_id)?;
    let parts = message.get("parts").and_then(Value::as_array);
    // Whether some part holds `key` (a call or a response) without an id.
    let without_id = |key: &str| {
        parts.is_some_and(|parts| {
            parts
                .iter()
                .any(|p| p.get(key).is_some_and(|inner| inner.get("id").is_none()))
        })
    };
    if without_id("functionResponse") {
        if let Some(previous) = latest_assistant_turn(memory, session_id, session.turn_count)? {
            let context = translate::to_messages(&[previous], backend, options)?.value;
            if let Value::Array(mut list) = context {
                let skip = list.len();
                list.push(message);
                let turns = translate::from_messages(&Value::Array(list), backend, options)?
                    .value
                    .turns;
                return Ok(turns.into_iter().skip(skip).collect());
            }
        }
    }
    let renumber = without_id("functionCall");
    let mut turns = translate::from_messages(&Value::Array(vec![message]), backend, options)?
        .value
        .turns;
    if renumber {
        let fresh = format!("gemini_call_{}_", session.turn_count);
        for turn in &mut turns {
            for part in &mut turn.parts {
                if let Part::ToolCall(call) = part {
                    if let Some(rest) = call.id.strip_prefix(GEMINI_GENERATED_PREFIX) {
                        call.id = format!("{fresh}{rest}");
                    }
                }
            }
        }
    }
    Ok(turns)
}

fn latest_assistant_turn(
    memory: &Memory,
    session_id: &str,
    turn_count: u64,
) -> Result<Option<Turn>> {
    let start = turn_count.saturating_sub(GEMINI_CONTEXT_SCAN);
    let turns = memory.store().turns(session_id, start..turn_count)?;
    Ok(turns
        .into_iter()
        .rev()
        .map(|t| t.turn)
        .find(|t| t.role == Role::Assistant))
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
