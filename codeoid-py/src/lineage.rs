//! Where sessions come from besides `start_session`: importing other harnesses' logs
//! (`import_logs`) and forking a session (`fork`), optionally handed to another backend.
//! Result classes: `ImportSummary`, `Forked`, `Handoff`.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use codeoid_core::fork::{
    ForkOptions, Forked as CoreForked, Handoff as CoreHandoff, HandoffOptions,
};
use codeoid_core::import::{ImportOptions, ImportSummary as CoreSummary, Progress};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::boundary::{detached, signal_raised};
use crate::convert::{self, Count};
use crate::memory::PyMemory;
use crate::repr;
use crate::sessions::{Lineage, Session};
use crate::translate::{backend, parse_options, turns_to_py};

/// What `import_logs` read and changed.
#[pyclass(frozen, module = "codeoid")]
pub struct ImportSummary {
    /// Sessions created by this import.
    #[pyo3(get)]
    pub sessions_new: u64,
    /// Sessions that existed and changed (new turns, a replaced tail, a finish).
    #[pyo3(get)]
    pub sessions_updated: u64,
    /// Sessions that existed and were up to date.
    #[pyo3(get)]
    pub sessions_unchanged: u64,
    /// Sessions read with no turns; not stored.
    #[pyo3(get)]
    pub sessions_empty: u64,
    /// Sessions not stored because of a problem with that session alone.
    #[pyo3(get)]
    pub sessions_skipped: u64,
    /// Sessions this import finished.
    #[pyo3(get)]
    pub sessions_finished: u64,
    /// Turns written.
    #[pyo3(get)]
    pub turns_added: u64,
    /// Turns that were already stored exactly so.
    #[pyo3(get)]
    pub turns_unchanged: u64,
    /// Stored turns replaced because the log changed them.
    #[pyo3(get)]
    pub turns_replaced: u64,
    /// Episodes written.
    #[pyo3(get)]
    pub episodes_added: u64,
    /// Episodes removed with replaced turns or an undone finish.
    #[pyo3(get)]
    pub episodes_removed: u64,
    /// The whole summary, serialized, for `to_dict`.
    json: String,
}

#[pymethods]
impl ImportSummary {
    /// Everything as plain data: the counts above, `skipped_sessions` and the readers' `report`
    /// (files, lines, malformed lines with their locations, warnings...).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value: Value = serde_json::from_str(&self.json).unwrap_or(Value::Null);
        convert::to_py(py, &value)
    }

    fn __repr__(&self) -> String {
        repr::fields(
            "ImportSummary",
            &[
                ("sessions_new", &self.sessions_new),
                ("sessions_updated", &self.sessions_updated),
                ("turns_added", &self.turns_added),
                ("episodes_added", &self.episodes_added),
            ],
        )
    }
}

impl ImportSummary {
    fn from_core(s: &CoreSummary) -> ImportSummary {
        ImportSummary {
            sessions_new: s.sessions_new,
            sessions_updated: s.sessions_updated,
            sessions_unchanged: s.sessions_unchanged,
            sessions_empty: s.sessions_empty,
            sessions_skipped: s.sessions_skipped,
            sessions_finished: s.sessions_finished,
            turns_added: s.turns_added,
            turns_unchanged: s.turns_unchanged,
            turns_replaced: s.turns_replaced,
            episodes_added: s.episodes_added,
            episodes_removed: s.episodes_removed,
            json: serde_json::to_string(s).unwrap_or_else(|_| "null".to_string()),
        }
    }
}

/// The copied conversation ready for the fork's target backend.
#[pyclass(frozen, module = "codeoid")]
pub struct Handoff {
    inner: CoreHandoff,
}

#[pymethods]
impl Handoff {
    /// The target format (`"anthropic"`, `"openai_chat"`, `"openai_responses"`, `"gemini"`).
    #[getter]
    fn format(&self) -> &'static str {
        self.inner.backend.format.name()
    }

    /// The target provider.
    #[getter]
    fn provider(&self) -> String {
        self.inner.backend.provider.clone()
    }

    /// The target model, if given.
    #[getter]
    fn model(&self) -> Option<String> {
        self.inner.backend.model.clone()
    }

    /// The target's context window in tokens.
    #[getter]
    fn context_window(&self) -> u64 {
        self.inner.context_window.tokens
    }

    /// Tokens the history could use.
    #[getter]
    fn budget_tokens(&self) -> u64 {
        self.inner.budget_tokens
    }

    /// Copied turns left to memory (announced by the seed).
    #[getter]
    fn omitted_turns(&self) -> usize {
        self.inner.omitted_turns()
    }

    /// `False` when even the smallest valid window exceeds the budget.
    #[getter]
    fn fits(&self) -> bool {
        self.inner.window.fits
    }

    /// The announcement of the omitted turns, if any.
    #[getter]
    fn seed(&self) -> Option<String> {
        self.inner.seed.clone()
    }

    /// The turns as sent (canonical dicts), the first opened by the seed.
    #[getter]
    fn turns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        turns_to_py(py, &self.inner.turns)
    }

    /// The turns in the target's native message format, ready to send.
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.inner.messages)
    }

    /// What the translation could not carry unchanged.
    #[getter]
    fn losses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(&self.inner.losses).unwrap_or(Value::Null);
        convert::to_py(py, &value)
    }

    fn __repr__(&self) -> String {
        repr::fields(
            "Handoff",
            &[
                ("format", &self.inner.backend.format.name()),
                ("turns", &self.inner.turns.len()),
                ("omitted_turns", &self.inner.omitted_turns()),
            ],
        )
    }
}

/// What `fork` created.
#[pyclass(frozen, get_all, module = "codeoid")]
pub struct Forked {
    /// The new session.
    pub session: Session,
    /// Its lineage (kind `"fork"`).
    pub lineage: Lineage,
    /// Turns copied from the parent.
    pub copied_turns: u64,
    /// The `fork` episode on the new session's timeline.
    pub episode_id: String,
    /// The conversation for the target backend, when one was given.
    pub handoff: Option<Py<Handoff>>,
}

#[pymethods]
impl Forked {
    fn __repr__(&self) -> String {
        repr::fields(
            "Forked",
            &[
                ("session_id", &self.session.id),
                ("copied_turns", &self.copied_turns),
            ],
        )
    }
}

#[pymethods]
impl PyMemory {
    /// Imports session logs (a file or a folder of Claude Code, Codex CLI, Gemini CLI or
    /// SWE-agent logs; the format is detected) into the store. Each session goes to the
    /// workspace its log names, or to `workspace` when given; logs that name none go to this
    /// memory's workspace. Re-importing adds nothing; a log that grew is brought up to date.
    ///
    /// `finish_after` (seconds; `None`: never) finishes sessions idle that long. `progress`, if
    /// given, is called with a dict `{files_done, files_total, bytes_done, bytes_total,
    /// current}` after each file. An exception it raises, or a Ctrl-C, stops the import
    /// before the next file and is raised: every file read before is stored, and importing
    /// again goes on from there.
    #[pyo3(signature = (path, *, workspace = None, finish_after = 600.0, progress = None))]
    fn import_logs(
        &self,
        py: Python<'_>,
        path: PathBuf,
        workspace: Option<PathBuf>,
        finish_after: Option<f64>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<ImportSummary> {
        let memory = self.get(py)?;
        let finish_after = finish_after
            .map(|secs| {
                Duration::try_from_secs_f64(secs).map_err(|_| {
                    crate::errors::invalid_input(
                        py,
                        format!("finish_after {secs} is not a duration; pass seconds >= 0 or None"),
                    )
                })
            })
            .transpose()?;
        let options = ImportOptions {
            workspace_dir: workspace,
            finish_after,
            ..ImportOptions::default()
        };
        // The first exception of the progress callback or of a signal handler (Ctrl-C): it
        // stops the import before the next file and is raised once the import returns.
        let raised: Mutex<Option<PyErr>> = Mutex::new(None);
        let summary = {
            let raised = &raised;
            detached(py, move || {
                let mut on_progress = |p: &Progress<'_>| {
                    let Some(callback) = &progress else { return };
                    if lock(raised).is_some() {
                        return;
                    }
                    Python::attach(|py| {
                        let result = progress_dict(py, p).and_then(|d| callback.call1(py, (d,)));
                        if let Err(err) = result {
                            *lock(raised) = Some(err);
                        }
                    });
                };
                let mut keep_going = || {
                    if lock(raised).is_some() {
                        return false;
                    }
                    match signal_raised() {
                        None => true,
                        Some(err) => {
                            *lock(raised) = Some(err);
                            false
                        }
                    }
                };
                memory.import_logs_while(&path, &options, &mut on_progress, &mut keep_going)
            })?
        };
        if let Some(err) = raised.into_inner().unwrap_or_else(PoisonError::into_inner) {
            return Err(err);
        }
        Ok(ImportSummary::from_core(&summary))
    }

    /// Forks session `session_id` into a new session `name`: a verbatim copy of its turns up to
    /// `at_turn` (the last turn's sequence number to copy; `None`: the tip) with lineage back to
    /// it. The parent is untouched. With `format` (and optionally `provider`, `model`) the fork
    /// also hands the conversation over to that backend (`Forked.handoff`): the newest turns
    /// that fit its context window, in its native message format. `options` is a dict of the
    /// core's handoff options (`budget_fraction`, `budget_tokens`, `context_window`,
    /// `translate`).
    #[pyo3(signature = (session_id, name, *, at_turn = None, format = None, provider = None, model = None, id = None, options = None))]
    #[allow(clippy::too_many_arguments)]
    fn fork(
        &self,
        py: Python<'_>,
        session_id: String,
        name: String,
        at_turn: Option<Count>,
        format: Option<String>,
        provider: Option<String>,
        model: Option<String>,
        id: Option<String>,
        options: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Forked> {
        let memory = self.get(py)?;
        let handoff = match options.filter(|o| !o.is_none()) {
            None => None,
            Some(o) => Some(convert::to_json(&o, "options")?),
        };
        let forked = detached(py, move || {
            let mut fork_options = ForkOptions::default();
            if let Some(value) = handoff {
                fork_options.handoff = parse_options(value, &HandoffOptions::default(), "options")?;
            }
            fork_options.id = id;
            let target = match format {
                Some(format) => Some(backend(&format, provider, model)?),
                None => None,
            };
            memory.fork(
                &session_id,
                at_turn.map(|t| t.0),
                target.as_ref(),
                &name,
                &fork_options,
            )
        })?;
        forked_to_py(py, forked)
    }
}

fn forked_to_py(py: Python<'_>, forked: CoreForked) -> PyResult<Forked> {
    let lineage = Session::from(forked.session.clone())
        .lineage
        .unwrap_or_else(|| Lineage {
            parent_session_id: forked.lineage.parent_session_id.clone(),
            parent_name: forked.lineage.parent_name.clone(),
            at_turn: forked.lineage.at_turn,
            kind: forked.lineage.kind.as_str(),
        });
    let handoff = match forked.handoff {
        Some(inner) => Some(Py::new(py, Handoff { inner })?),
        None => None,
    };
    Ok(Forked {
        session: Session::from(forked.session),
        lineage,
        copied_turns: forked.copied_turns,
        episode_id: forked.episode_id,
        handoff,
    })
}

fn progress_dict<'py>(py: Python<'py>, p: &Progress<'_>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("files_done", p.files_done)?;
    dict.set_item("files_total", p.files_total)?;
    dict.set_item("bytes_done", p.bytes_done)?;
    dict.set_item("bytes_total", p.bytes_total)?;
    dict.set_item("current", p.current.to_string_lossy())?;
    Ok(dict)
}

/// `mutex` locked, whether or not a panic poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
