//! The four memory tools (`recall`, `recall_file`, `timeline`, `get_episode`) for a harness to
//! mount next to its own: their declarations, generic or in a provider's shape, and the
//! dispatcher that answers a model's call. Result class: `ToolResult`.
//!
//! A model's mistakes (an unknown tool, bad arguments, a missing episode) are not exceptions: the
//! core answers them with an error result whose text tells the model what to do, so a loop never
//! breaks on them; so are decoded arguments holding what JSON text can carry but codeoid cannot
//! (an integer beyond 64 bits, NaN, a lone surrogate from an escape). Only a programmer's
//! mistakes raise: arguments Python cannot express as JSON (`TypeError`), a JSON string that is
//! not valid Unicode, a closed `Memory`.

use codeoid_core::Error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::boundary::{attached, detached};
use crate::convert;
use crate::memory::PyMemory;
use crate::repr;
use crate::translate;

/// What a memory tool returns to the model.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct ToolResult {
    /// The text the model reads.
    pub text: String,
    /// `True` when the call failed: send it as an error tool result (`is_error` in Anthropic's
    /// `tool_result`, an error status in other APIs). The text says what to do.
    pub is_error: bool,
}

#[pymethods]
impl ToolResult {
    fn __repr__(&self) -> String {
        let shown: String = self.text.chars().take(60).collect();
        repr::fields(
            "ToolResult",
            &[("is_error", &self.is_error), ("text", &shown)],
        )
    }
}

/// The arguments of a call as the JSON text the core parses: a `str` as the model sent it, a
/// dict (or any JSON value) serialized, `None` as no arguments.
///
/// `Ok(Err(reason))` is a value the model's JSON could carry but codeoid cannot (an integer
/// beyond 64 bits, NaN, nesting deeper than 128, a lone surrogate from a `\ud800` escape) in
/// decoded arguments: the model's mistake, answered as a tool error. A value JSON cannot hold at
/// all (`bytes`, a set) or JSON text that is not valid Unicode is the caller's, and raises.
fn arguments_text(
    arguments: Option<&Bound<'_, PyAny>>,
) -> PyResult<std::result::Result<String, String>> {
    let Some(arguments) = arguments.filter(|a| !a.is_none()) else {
        return Ok(Ok("{}".to_owned()));
    };
    if let Ok(text) = arguments.cast::<PyString>() {
        return convert::text(text, "arguments").map(Ok);
    }
    let py = arguments.py();
    let value = match convert::to_json(arguments, "arguments") {
        Ok(value) => value,
        Err(err) if err.is_instance_of::<PyValueError>(py) => {
            return Ok(Err(err.value(py).to_string()));
        }
        Err(err) => return Err(err),
    };
    attached(py, || {
        serde_json::to_string(&value)
            .map(Ok)
            .map_err(|e| Error::internal("cannot serialize tool arguments").with_source(e))
    })
}

#[pymethods]
impl PyMemory {
    /// Answers a model's call of memory tool `name` (bare, or prefixed as in
    /// `codeoid_memory__recall`). `arguments` are the call's arguments as the model sent them:
    /// a JSON string (OpenAI, `function.arguments`) or a dict (Anthropic's `input`, Gemini's
    /// `args`). `session` is the session the model is working in. Never raises for the model's
    /// mistakes: an unknown tool or bad arguments give a `ToolResult` with `is_error` set.
    #[pyo3(signature = (name, arguments = None, *, session = None))]
    fn call_tool(
        &self,
        py: Python<'_>,
        name: String,
        arguments: Option<Bound<'_, PyAny>>,
        session: Option<String>,
    ) -> PyResult<ToolResult> {
        let memory = self.get(py)?;
        let arguments = match arguments_text(arguments.as_ref())? {
            Ok(text) => text,
            Err(reason) => {
                let out = codeoid_core::tools::invalid_arguments(&name, &reason);
                return Ok(ToolResult {
                    text: out.text,
                    is_error: out.is_error,
                });
            }
        };
        let out = detached(py, move || {
            Ok(memory.call_tool(session.as_deref(), &name, &arguments))
        })?;
        Ok(ToolResult {
            text: out.text,
            is_error: out.is_error,
        })
    }

    /// The four tools' declarations, `[{"name", "description", "input_schema"}, ...]`, named
    /// `{prefix}__{name}` when `prefix` is given (ASCII letters, digits, `_` and `-`; names stay within 64
    /// characters).
    /// `codeoid.declare_tools(...)` or `tool_declarations(format)` shape them for a provider.
    #[pyo3(signature = (prefix = None))]
    fn tool_schemas<'py>(
        &self,
        py: Python<'py>,
        prefix: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let memory = self.get(py)?;
        let value = attached(py, || {
            let specs = memory.tool_schemas(prefix.as_deref())?;
            serde_json::to_value(specs)
                .map_err(|e| Error::internal("cannot serialize tool schemas").with_source(e))
        })?;
        convert::to_py(py, &value)
    }

    /// The four tools declared in `format`'s shape (`"anthropic"`, `"openai_chat"`,
    /// `"openai_responses"`, `"gemini"`), ready to add to a request's `tools`:
    /// `{"tools": [...], "losses": [...]}`, as `codeoid.declare_tools` returns.
    #[pyo3(signature = (format, *, prefix = None, options = None))]
    fn tool_declarations<'py>(
        &self,
        py: Python<'py>,
        format: String,
        prefix: Option<String>,
        options: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let memory = self.get(py)?;
        let options = translate::options(options.as_ref())?;
        let specs = attached(py, || memory.tool_schemas(prefix.as_deref()))?;
        translate::declarations(py, &specs, &format, &options)
    }
}
