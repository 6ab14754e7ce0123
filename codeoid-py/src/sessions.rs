//! Sessions: starting, looking up, listing and finishing them, and the frozen `Session` and
//! `Lineage` result classes.

use chrono::{DateTime, Utc};
use codeoid_core::store::{self, NewSession};
use pyo3::prelude::*;

use crate::boundary::detached;
use crate::convert::AwareTime;
use crate::memory::PyMemory;
use crate::repr;

/// Where a session descends from: a fork of another session, or a subagent it started.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct Lineage {
    /// The parent session's id.
    pub parent_session_id: String,
    /// The parent's name at the time, if it had one.
    pub parent_name: Option<String>,
    /// The parent's turn sequence number the copy was taken at (`None`: its tip).
    pub at_turn: Option<u64>,
    /// `"fork"` or `"subagent"`.
    pub kind: &'static str,
}

#[pymethods]
impl Lineage {
    fn __repr__(&self) -> String {
        repr::fields(
            "Lineage",
            &[
                ("kind", &self.kind),
                ("parent_session_id", &self.parent_session_id),
                ("at_turn", &self.at_turn),
            ],
        )
    }
}

/// One session of the workspace: a conversation, however many times its context was rotated.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct Session {
    /// The session id.
    pub id: String,
    /// The workspace it belongs to.
    pub workspace_id: String,
    /// Display name, if any.
    pub name: Option<String>,
    /// Provider of its model, if known.
    pub provider: Option<String>,
    /// Its model id, if known.
    pub model: Option<String>,
    /// The directory it ran in.
    pub root: String,
    /// When it started.
    pub created_at: DateTime<Utc>,
    /// Where it descends from, for forks and subagents.
    pub lineage: Option<Lineage>,
    /// How many times its context was rotated.
    pub rotation_count: u64,
    /// When it was last rotated.
    pub last_rotation_at: Option<DateTime<Utc>>,
    /// The provider-side context currently backing it.
    pub backing_context_id: Option<String>,
    /// When it was finished, if no turn has followed the finish.
    pub finished_at: Option<DateTime<Utc>>,
    /// Its first user prompt (one line), if any.
    pub first_intent: Option<String>,
    /// When its last turn was recorded.
    pub last_activity_at: DateTime<Utc>,
    /// Turns recorded so far.
    pub turn_count: u64,
}

#[pymethods]
impl Session {
    fn __repr__(&self) -> String {
        repr::fields(
            "Session",
            &[
                ("id", &self.id),
                ("name", &self.name),
                ("turn_count", &self.turn_count),
                ("rotation_count", &self.rotation_count),
            ],
        )
    }
}

impl From<store::Session> for Session {
    fn from(s: store::Session) -> Session {
        Session {
            id: s.id,
            workspace_id: s.workspace_id,
            name: s.name,
            provider: s.provider,
            model: s.model,
            root: s.root.to_string_lossy().into_owned(),
            created_at: s.created_at,
            lineage: s.lineage.map(|l| Lineage {
                parent_session_id: l.parent_session_id,
                parent_name: l.parent_name,
                at_turn: l.at_turn,
                kind: l.kind.as_str(),
            }),
            rotation_count: s.rotation_count,
            last_rotation_at: s.last_rotation_at,
            backing_context_id: s.backing_context_id,
            finished_at: s.finished_at,
            first_intent: s.first_intent,
            last_activity_at: s.last_activity_at,
            turn_count: s.turn_count,
        }
    }
}

#[pymethods]
impl PyMemory {
    /// Starts a session in this workspace and returns it. With the id of an existing session of
    /// this workspace, returns that session unchanged; `id=None` picks a fresh id.
    ///
    /// Raises `InvalidInputError` for an empty id and `AlreadyExistsError` when the id belongs
    /// to another workspace.
    #[pyo3(signature = (id = None, *, name = None, provider = None, model = None, backing_context_id = None, created_at = None))]
    #[allow(clippy::too_many_arguments)]
    fn start_session(
        &self,
        py: Python<'_>,
        id: Option<String>,
        name: Option<String>,
        provider: Option<String>,
        model: Option<String>,
        backing_context_id: Option<String>,
        created_at: Option<AwareTime>,
    ) -> PyResult<Session> {
        let memory = self.get(py)?;
        let new = NewSession {
            id,
            name,
            provider,
            model,
            created_at: created_at.map(|t| t.0),
            lineage: None,
            backing_context_id,
        };
        detached(py, move || memory.start_session(new)).map(Session::from)
    }

    /// Session `session_id` of this workspace; `NotFoundError` when it is not here.
    fn session(&self, py: Python<'_>, session_id: String) -> PyResult<Session> {
        let memory = self.get(py)?;
        detached(py, move || memory.session(&session_id)).map(Session::from)
    }

    /// Every session of this workspace, oldest first.
    fn sessions(&self, py: Python<'_>) -> PyResult<Vec<Session>> {
        let memory = self.get(py)?;
        let sessions = detached(py, move || memory.sessions())?;
        Ok(sessions.into_iter().map(Session::from).collect())
    }

    /// Finishes session `session_id`: tool calls still pending become cancelled episodes and a
    /// buffered final answer is stored. Returns the ids of the episodes this wrote.
    fn finish_session(&self, py: Python<'_>, session_id: String) -> PyResult<Vec<String>> {
        let memory = self.get(py)?;
        detached(py, move || memory.finish_session(&session_id))
    }
}
