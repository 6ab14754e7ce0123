//! Recall: hybrid retrieval of this workspace's episodes, the latest read of a file, and the
//! embedding worker's flush, status and warnings. Result classes: `Hit`, `Components`,
//! `Relevance`, `FileRecall`, `PassedOver`, `EmbeddingStatus`.
//!
//! Recall ranks with the embedding model when one is loaded, so it is the call most worth running
//! from a thread pool: the query is embedded and SQLite searched with the GIL released.

use std::time::Duration;

use chrono::{DateTime, Utc};
use codeoid_core::retrieve::{self, EmbeddingPhase, RecallFilters, RecallQuery};
use codeoid_core::tools::{self, DiskState};
use pyo3::prelude::*;

use crate::boundary::{detached, until_signal};
use crate::convert::{AwareTime, Count, PathList};
use crate::errors;
use crate::memory::PyMemory;
use crate::reads::{Episode, EpisodeHeader, EpisodePath};
use crate::repr;

/// The four signals of a hit, each in [0, 1]; `Hit.score` is their weighted sum.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct Components {
    /// Cosine similarity of the query and the episode's best window (0 when the episode is not
    /// embedded yet or no model is loaded).
    pub vec: f64,
    /// BM25 over the candidate batch, normalized to the best one (0 when no word matches).
    pub bm25: f64,
    /// `0.5 ** (age_hours / half_life_hours)`.
    pub recency: f64,
    /// Overlap of the query's file paths and the episode's.
    pub path: f64,
}

#[pymethods]
impl Components {
    fn __repr__(&self) -> String {
        repr::fields(
            "Components",
            &[
                ("vec", &self.vec),
                ("bm25", &self.bm25),
                ("recency", &self.recency),
                ("path", &self.path),
            ],
        )
    }
}

/// How relevant a hit is on its own, whatever its rank: the query terms its text holds and its
/// similarity against what the query typically scores in this scope.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct Relevance {
    /// The query's search terms (0 when it has none).
    pub terms: usize,
    /// The terms the hit's text holds, in the query's order.
    pub held: Vec<String>,
    /// The held terms' share of the query's term weight (rare words weigh more), in [0, 1].
    pub share: f64,
    /// The hit's cosine above the scope's median, in units of its spread; `None` without a
    /// vector for the hit or a baseline (no model, or fewer than 8 embedded episodes in scope).
    pub lift: Option<f64>,
    /// The lift that counts as clearly above the typical similarity here; `None` without a
    /// baseline.
    pub lift_needed: Option<f64>,
    /// Neither a lexical match worth the name nor a clearly higher similarity: the `recall`
    /// tool shows such a hit as a header only.
    pub weak: bool,
}

#[pymethods]
impl Relevance {
    fn __repr__(&self) -> String {
        repr::fields(
            "Relevance",
            &[
                ("terms", &self.terms),
                ("held", &self.held),
                ("share", &self.share),
                ("lift", &self.lift),
                ("lift_needed", &self.lift_needed),
                ("weak", &self.weak),
            ],
        )
    }
}

/// One recalled episode: its fields, its exact content, and why it ranked where it did.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct Hit {
    /// The episode id (`Memory.get_episode(id)` reads it whole, with its blobs).
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
    /// The stored content, byte for byte.
    pub content: String,
    /// File paths it touched.
    pub paths: Vec<EpisodePath>,
    /// The weighted sum of the components: what the hits are sorted by, best first.
    pub score: f64,
    /// The four signals.
    pub components: Components,
    /// How relevant it is on its own (terms held, similarity lift, weak or not).
    pub relevance: Relevance,
}

impl From<retrieve::Hit> for Hit {
    fn from(hit: retrieve::Hit) -> Hit {
        let h = hit.header;
        let c = hit.components;
        let r = hit.relevance;
        Hit {
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
            content: hit.content,
            paths: hit.paths.into_iter().map(EpisodePath::from).collect(),
            score: hit.score,
            components: Components {
                vec: c.vec,
                bm25: c.bm25,
                recency: c.recency,
                path: c.path,
            },
            relevance: Relevance {
                terms: r.terms,
                held: r.held,
                share: r.share,
                lift: r.lift,
                lift_needed: r.lift_needed,
                weak: r.weak,
            },
        }
    }
}

#[pymethods]
impl Hit {
    fn __repr__(&self) -> String {
        repr::fields(
            "Hit",
            &[
                ("id", &self.id),
                ("kind", &self.kind),
                ("summary", &self.summary),
                ("score", &self.score),
            ],
        )
    }
}

/// The most recent read of a file, and whether the file on disk is still what was read.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct FileRecall {
    /// The episode that read it, whole.
    pub episode: Episode,
    /// The path of that episode that matched (its `content_hash` is the file at the read).
    pub path: EpisodePath,
    /// The file on disk now: `"unchanged"`, `"changed"`, `"deleted"` or `"unknown"`.
    pub disk: &'static str,
    /// Why the state is `"unknown"` (no hash recorded, file too large...); `None` otherwise.
    pub disk_reason: Option<String>,
    /// The latest episode that wrote the file after that read, if memory has one.
    pub later_write: Option<EpisodeHeader>,
    /// When the read may not have covered the whole file, what `recall_file` tells the model
    /// about it (`"this read holds lines 120–169 of 1204 only; read the file for the rest"`);
    /// `None` for a whole-file read.
    pub part: Option<String>,
    /// The later read of part of the file that this earlier whole read of the same content was
    /// chosen over; `None` when the latest read is shown.
    pub passed_over: Option<PassedOver>,
}

/// A read of part of a file that `recall_file` passed over for an earlier whole read of the same
/// content.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct PassedOver {
    /// The later read.
    pub episode: EpisodeHeader,
    /// What the tool tells the model about the part it may hold.
    pub part: String,
}

#[pymethods]
impl PassedOver {
    fn __repr__(&self) -> String {
        repr::fields(
            "PassedOver",
            &[("episode", &self.episode.id), ("part", &self.part)],
        )
    }
}

impl From<tools::FileRecall> for FileRecall {
    fn from(found: tools::FileRecall) -> FileRecall {
        let (disk, disk_reason) = match found.disk {
            DiskState::Unchanged => ("unchanged", None),
            DiskState::Changed => ("changed", None),
            DiskState::Deleted => ("deleted", None),
            DiskState::Unknown(reason) => ("unknown", Some(reason)),
        };
        FileRecall {
            episode: Episode::from(found.episode),
            path: EpisodePath::from(found.path),
            disk,
            disk_reason,
            later_write: found.later_write.map(EpisodeHeader::from),
            part: found.part.map(|part| part.to_string()),
            passed_over: found.passed_over.map(|p| PassedOver {
                episode: EpisodeHeader::from(p.header),
                part: p.part.to_string(),
            }),
        }
    }
}

#[pymethods]
impl FileRecall {
    fn __repr__(&self) -> String {
        repr::fields(
            "FileRecall",
            &[
                ("path", &self.path.relative),
                ("episode", &self.episode.id),
                ("disk", &self.disk),
            ],
        )
    }
}

/// A snapshot of the background embedding worker.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct EmbeddingStatus {
    /// `"downloading"`, `"loading"`, `"ready"`, `"unavailable"` (no model; recall is lexical,
    /// see `Memory.warnings()`) or `"disabled"` (`embeddings=False` or `CODEOID_EMBEDDINGS=0`).
    pub phase: &'static str,
    /// The id vectors are recorded with, once the model is loaded.
    pub model_id: Option<String>,
    /// Episodes in the in-memory vector index.
    pub indexed_episodes: usize,
    /// Window vectors in the in-memory vector index.
    pub indexed_windows: usize,
    /// Bytes the in-memory vector index holds.
    pub index_bytes: usize,
    /// Episodes the model failed on in this process (they are found by words only).
    pub failed_episodes: u64,
}

fn phase_name(phase: EmbeddingPhase) -> &'static str {
    match phase {
        EmbeddingPhase::Downloading => "downloading",
        EmbeddingPhase::Loading => "loading",
        EmbeddingPhase::Ready => "ready",
        EmbeddingPhase::Unavailable => "unavailable",
        EmbeddingPhase::Disabled => "disabled",
    }
}

#[pymethods]
impl EmbeddingStatus {
    fn __repr__(&self) -> String {
        repr::fields(
            "EmbeddingStatus",
            &[
                ("phase", &self.phase),
                ("model_id", &self.model_id),
                ("indexed_episodes", &self.indexed_episodes),
            ],
        )
    }
}

/// `seconds` as a duration, or an `InvalidInputError` naming `what`.
pub(crate) fn seconds(py: Python<'_>, secs: f64, what: &str) -> PyResult<Duration> {
    Duration::try_from_secs_f64(secs).map_err(|_| {
        errors::invalid_input(
            py,
            format!("{what} {secs} is not a duration; pass seconds as a non-negative number"),
        )
    })
}

#[pymethods]
impl PyMemory {
    /// The episodes of this workspace most relevant to `query`, best first (hybrid: meaning,
    /// words, recency and file paths).
    ///
    /// `session` is the calling session: its live context (its episodes since its last
    /// rotation, all of them if it never rotated) is left out unless `include_current_session`. `limit` is 1..=100. The filters apply before
    /// the candidates are cut: `only_session` and `exclude_session` (session ids), `tool_name`
    /// (case-insensitive), `since` (inclusive) and `until` (exclusive) as aware datetimes, and
    /// `paths` (files relative to the workspace root or absolute, which also count as query
    /// paths). `as_of` measures recency from that moment instead of now.
    ///
    /// Episodes recorded a moment ago may not be embedded yet; call `flush()` first when that
    /// matters.
    #[pyo3(signature = (
        query,
        *,
        session = None,
        limit = Count(6),
        include_current_session = false,
        only_session = None,
        exclude_session = None,
        tool_name = None,
        since = None,
        until = None,
        paths = None,
        as_of = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn recall(
        &self,
        py: Python<'_>,
        query: String,
        session: Option<String>,
        limit: Count,
        include_current_session: bool,
        only_session: Option<String>,
        exclude_session: Option<String>,
        tool_name: Option<String>,
        since: Option<AwareTime>,
        until: Option<AwareTime>,
        paths: Option<PathList>,
        as_of: Option<AwareTime>,
    ) -> PyResult<Vec<Hit>> {
        let memory = self.get(py)?;
        let limit = limit.to_usize(py, "limit")?;
        let query = RecallQuery {
            text: query,
            limit,
            filters: RecallFilters {
                session_id: only_session,
                exclude_session_id: exclude_session,
                tool_name,
                since: since.map(|t| t.0),
                until: until.map(|t| t.0),
                paths: paths.unwrap_or_default().0,
                ..RecallFilters::default()
            },
            include_current_session,
            as_of: as_of.map(|t| t.0),
        };
        let hits = detached(py, move || memory.recall(session.as_deref(), &query))?;
        Ok(hits.into_iter().map(Hit::from).collect())
    }

    /// The most recent read of `path` (relative to the workspace root, or absolute) in any
    /// session of this workspace, with whether the file changed on disk since; `None` when no
    /// session read it.
    fn recall_file(&self, py: Python<'_>, path: String) -> PyResult<Option<FileRecall>> {
        let memory = self.get(py)?;
        let found = detached(py, move || memory.recall_file(&path))?;
        Ok(found.map(FileRecall::from))
    }

    /// Waits until every episode recorded before the call is embedded and searchable by meaning
    /// (at once when embeddings are off or unavailable). With `timeout` (seconds) it gives up
    /// after that long and returns `False`; otherwise it returns `True`. A Ctrl-C (or any
    /// signal whose handler raises) while it waits raises at once, within about 0.1 s.
    #[pyo3(signature = (timeout = None))]
    fn flush(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
        let memory = self.get(py)?;
        let timeout = timeout
            .map(|secs| seconds(py, secs, "timeout"))
            .transpose()?;
        let mut raised: Option<PyErr> = None;
        let flushed = {
            let raised = &mut raised;
            detached(py, move || {
                memory.flush_while(timeout, &mut until_signal(raised))
            })?
        };
        match raised {
            Some(err) => Err(err),
            None => Ok(flushed),
        }
    }

    /// Warnings to show the person once: why recall is lexical only, episodes the model failed
    /// on, store errors the worker is retrying. Empty when all is well.
    fn warnings(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let memory = self.get(py)?;
        detached(py, move || Ok(memory.warnings()))
    }

    /// The embedding worker's progress: phase, model, episodes indexed, index memory.
    fn embedding_status(&self, py: Python<'_>) -> PyResult<EmbeddingStatus> {
        let memory = self.get(py)?;
        let status = detached(py, move || Ok(memory.embedding_status()))?;
        Ok(EmbeddingStatus {
            phase: phase_name(status.phase),
            model_id: status.model_id,
            indexed_episodes: status.indexed_episodes,
            indexed_windows: status.indexed_windows,
            index_bytes: status.index_bytes,
            failed_episodes: status.failed_episodes,
        })
    }
}
