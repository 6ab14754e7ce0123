//! Reading memory back: episodes byte for byte, the timeline, raw blobs, and the model-facing
//! text of each. Result classes: `Episode`, `EpisodeHeader`, `EpisodePath`, `BlobRef`,
//! `TimelinePage`.
//!
//! Everything is scoped to the memory's workspace: another workspace's ids are `NotFoundError`.

use chrono::{DateTime, Utc};
use codeoid_core::store::{self, StoredEpisode, StoredPath, TimelineQuery};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::boundary::detached;
use crate::convert::Count;
use crate::memory::PyMemory;
use crate::repr;

/// A file path an episode touched, as given and relative to the workspace root.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct EpisodePath {
    /// The path exactly as the tool input gave it.
    pub given: String,
    /// The same path relative to the workspace root (as given when outside it).
    pub relative: String,
    /// `"read"`, `"write"`, `"search"` or another access the tool implies.
    pub access: &'static str,
    /// Content hash of the file when it was read, if recorded.
    pub content_hash: Option<String>,
}

/// A raw blob linked to an episode: the whole of an oversize content, or a command's output.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct BlobRef {
    /// `"content"`, `"stdout"` or `"stderr"`.
    pub role: String,
    /// The blob id; `Memory.blob(blob_id)` returns its bytes.
    pub blob_id: String,
    /// Its size in bytes.
    pub len: u64,
}

/// The metadata of an episode, without its content (what the timeline lists).
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct EpisodeHeader {
    /// The episode id.
    pub id: String,
    /// The workspace it belongs to.
    pub workspace_id: String,
    /// The session it belongs to.
    pub session_id: String,
    /// Sequence number of the turn that completed it.
    pub turn_seq: u64,
    /// `"tool_call"`, `"user_turn"`, `"assistant_turn"`, `"error"`, `"compaction"`,
    /// `"rotation"`, `"fork"` or `"context"`.
    pub kind: &'static str,
    /// The tool's name, for tool calls.
    pub tool_name: Option<String>,
    /// The tool call id, for tool calls.
    pub call_id: Option<String>,
    /// `"ok"`, `"failed"` or `"cancelled"`.
    pub status: &'static str,
    /// One line, at most 120 characters.
    pub summary: String,
    /// When it happened.
    pub created_at: DateTime<Utc>,
    /// Estimated tokens of its content.
    pub token_estimate: u64,
}

impl From<StoredPath> for EpisodePath {
    fn from(p: StoredPath) -> EpisodePath {
        EpisodePath {
            given: p.given,
            relative: p.relative,
            access: p.access.as_str(),
            content_hash: p.content_hash,
        }
    }
}

#[pymethods]
impl EpisodePath {
    fn __repr__(&self) -> String {
        repr::fields(
            "EpisodePath",
            &[("relative", &self.relative), ("access", &self.access)],
        )
    }
}

#[pymethods]
impl BlobRef {
    fn __repr__(&self) -> String {
        repr::fields(
            "BlobRef",
            &[
                ("role", &self.role),
                ("blob_id", &self.blob_id),
                ("len", &self.len),
            ],
        )
    }
}

impl From<store::EpisodeHeader> for EpisodeHeader {
    fn from(h: store::EpisodeHeader) -> EpisodeHeader {
        EpisodeHeader {
            id: h.id,
            workspace_id: h.workspace_id,
            session_id: h.session_id,
            turn_seq: h.turn_seq,
            kind: h.kind.as_str(),
            tool_name: h.tool_name,
            call_id: h.call_id,
            status: h.status.as_str(),
            summary: h.summary,
            created_at: h.created_at,
            token_estimate: h.token_estimate,
        }
    }
}

#[pymethods]
impl EpisodeHeader {
    fn __repr__(&self) -> String {
        repr::fields(
            "EpisodeHeader",
            &[
                ("id", &self.id),
                ("kind", &self.kind),
                ("summary", &self.summary),
            ],
        )
    }
}

/// One episode, stored verbatim: the unit of memory.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct Episode {
    /// The episode id.
    pub id: String,
    /// The workspace it belongs to.
    pub workspace_id: String,
    /// The session it belongs to.
    pub session_id: String,
    /// Sequence number of the turn that completed it.
    pub turn_seq: u64,
    /// `"tool_call"`, `"user_turn"`, `"assistant_turn"`, `"error"`, `"compaction"`,
    /// `"rotation"`, `"fork"` or `"context"`.
    pub kind: &'static str,
    /// The tool's name, for tool calls.
    pub tool_name: Option<String>,
    /// The tool call id, for tool calls.
    pub call_id: Option<String>,
    /// `"ok"`, `"failed"` or `"cancelled"`.
    pub status: &'static str,
    /// One line, at most 120 characters.
    pub summary: String,
    /// When it happened.
    pub created_at: DateTime<Utc>,
    /// Estimated tokens of its content.
    pub token_estimate: u64,
    /// The stored content, exactly (an oversize one holds head, marker and tail; the whole is in
    /// the `"content"` blob).
    pub content: String,
    /// File paths it touched.
    pub paths: Vec<EpisodePath>,
    /// Raw blobs linked to it.
    pub blobs: Vec<BlobRef>,
}

impl From<StoredEpisode> for Episode {
    fn from(e: StoredEpisode) -> Episode {
        let h = e.header;
        Episode {
            id: h.id,
            workspace_id: h.workspace_id,
            session_id: h.session_id,
            turn_seq: h.turn_seq,
            kind: h.kind.as_str(),
            tool_name: h.tool_name,
            call_id: h.call_id,
            status: h.status.as_str(),
            summary: h.summary,
            created_at: h.created_at,
            token_estimate: h.token_estimate,
            content: e.content,
            paths: e.paths.into_iter().map(EpisodePath::from).collect(),
            blobs: e
                .blobs
                .into_iter()
                .map(|b| BlobRef {
                    role: b.role,
                    blob_id: b.blob_id,
                    len: b.len,
                })
                .collect(),
        }
    }
}

#[pymethods]
impl Episode {
    fn __repr__(&self) -> String {
        repr::fields(
            "Episode",
            &[
                ("id", &self.id),
                ("kind", &self.kind),
                ("summary", &self.summary),
                ("content_len", &self.content.chars().count()),
            ],
        )
    }
}

/// One page of the timeline, newest first.
#[pyclass(frozen, module = "codeoid")]
pub struct TimelinePage {
    episodes: Vec<EpisodeHeader>,
    next: Option<TimelineQuery>,
}

#[pymethods]
impl TimelinePage {
    /// The episodes of this page, newest first.
    #[getter]
    fn episodes(&self) -> Vec<EpisodeHeader> {
        self.episodes.clone()
    }

    /// The keyword arguments of the next (older) page, `{"offset", "limit", "before"}`, to pass
    /// as `memory.timeline(**page.next)`; `None` at the end of the timeline.
    #[getter]
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(next) = &self.next else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("offset", next.offset)?;
        dict.set_item("limit", next.limit)?;
        dict.set_item("before", next.before.as_deref())?;
        Ok(Some(dict))
    }

    fn __len__(&self) -> usize {
        self.episodes.len()
    }

    fn __repr__(&self) -> String {
        repr::fields(
            "TimelinePage",
            &[
                ("episodes", &self.episodes.len()),
                ("more", &self.next.is_some()),
            ],
        )
    }
}

#[pymethods]
impl PyMemory {
    /// Episode `episode_id` of this workspace, its content byte for byte. `NotFoundError` when
    /// it does not exist here.
    fn get_episode(&self, py: Python<'_>, episode_id: String) -> PyResult<Episode> {
        let memory = self.get(py)?;
        detached(py, move || memory.episode(&episode_id)).map(Episode::from)
    }

    /// Episode `episode_id` under the `get_episode` header, then its whole stored content, with
    /// sessions labelled relative to `session_id`. The `get_episode` tool (`call_tool`) shows
    /// long content in pages instead.
    #[pyo3(signature = (episode_id, session_id = None))]
    fn episode_text(
        &self,
        py: Python<'_>,
        episode_id: String,
        session_id: Option<String>,
    ) -> PyResult<String> {
        let memory = self.get(py)?;
        detached(py, move || {
            memory.episode_text(session_id.as_deref(), &episode_id)
        })
    }

    /// One page of this workspace's timeline, newest first. With `before` (an episode id) the
    /// page starts just older than that episode, so a walk does not shift as new episodes
    /// arrive. `limit` is 1..=1000.
    #[pyo3(signature = (*, offset = Count(0), limit = Count(20), before = None))]
    fn timeline(
        &self,
        py: Python<'_>,
        offset: Count,
        limit: Count,
        before: Option<String>,
    ) -> PyResult<TimelinePage> {
        let memory = self.get(py)?;
        let query = TimelineQuery {
            offset: offset.0,
            limit: limit.0,
            before,
        };
        let page = detached(py, move || memory.timeline(&query))?;
        Ok(TimelinePage {
            episodes: page.episodes.into_iter().map(EpisodeHeader::from).collect(),
            next: page.next,
        })
    }

    /// The text a model reads for one timeline page, sessions labelled relative to
    /// `session_id`; it ends with the arguments of the next page.
    #[pyo3(signature = (session_id = None, *, offset = Count(0), limit = Count(20), before = None))]
    fn timeline_text(
        &self,
        py: Python<'_>,
        session_id: Option<String>,
        offset: Count,
        limit: Count,
        before: Option<String>,
    ) -> PyResult<String> {
        let memory = self.get(py)?;
        let query = TimelineQuery {
            offset: offset.0,
            limit: limit.0,
            before,
        };
        detached(py, move || {
            memory.timeline_text(session_id.as_deref(), &query)
        })
    }

    /// The exact bytes of raw blob `blob_id` (see `Episode.blobs`). `NotFoundError` when no
    /// episode of this workspace links it.
    fn blob<'py>(&self, py: Python<'py>, blob_id: String) -> PyResult<Bound<'py, PyBytes>> {
        let memory = self.get(py)?;
        let bytes = detached(py, move || memory.blob(&blob_id))?;
        Ok(PyBytes::new(py, &bytes))
    }
}
