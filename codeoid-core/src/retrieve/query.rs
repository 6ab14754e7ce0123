//! What a recall asks ([`RecallQuery`], [`RecallFilters`]) and what it returns ([`Hit`] with its
//! four [`Components`] and its [`Relevance`]).
//!
//! Plain values: validation happens in [`RecallQuery::validate`], ranking elsewhere.

use chrono::{DateTime, Utc};

use super::relevance::Relevance;
use crate::error::{Error, Result};
use crate::store::{EpisodeHeader, StoredPath};

/// Most hits one recall returns.
pub const MAX_RECALL_LIMIT: usize = 100;

/// Restrictions applied to both channels before their candidates are cut, so a filtered recall
/// returns matches whenever any exist. `Default` filters nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecallFilters {
    /// Only episodes of this session.
    pub session_id: Option<String>,
    /// No episodes of this session.
    pub exclude_session_id: Option<String>,
    /// A session's live context, left out: its episodes from this store key on (`i64::MIN` for
    /// all of them). [`crate::Memory::recall`] sets it to the calling session's episodes since
    /// its last rotation; it is independent of `exclude_session_id`.
    pub exclude_live: Option<(String, i64)>,
    /// Only episodes of this tool (ASCII case-insensitive, the same in both channels).
    pub tool_name: Option<String>,
    /// Only episodes created at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only episodes created strictly before this time.
    pub until: Option<DateTime<Utc>>,
    /// Only episodes touching one of these files (relative or absolute; normalized against the
    /// workspace root). They also count as query paths for the path signal.
    pub paths: Vec<String>,
}

/// One recall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallQuery {
    /// What to look for: any text (a question, an error message, an identifier, a path).
    pub text: String,
    /// Hits to return, 1..=[`MAX_RECALL_LIMIT`]. Default 6.
    pub limit: usize,
    /// Filters.
    pub filters: RecallFilters,
    /// Used by `Memory::recall`: when `false` (the default) the calling session's own episodes
    /// are left out, since they are usually still in its context. The retriever itself applies
    /// only `filters`.
    pub include_current_session: bool,
    /// The time recency is measured from; `None` means now. Replays and evaluations set it to
    /// the moment the question was asked (pair it with `filters.until` to hide later episodes).
    pub as_of: Option<DateTime<Utc>>,
}

impl RecallQuery {
    /// A query for `text` with the default limit and no filters.
    pub fn new(text: impl Into<String>) -> RecallQuery {
        RecallQuery {
            text: text.into(),
            limit: 6,
            filters: RecallFilters::default(),
            include_current_session: false,
            as_of: None,
        }
    }

    /// The same query returning `limit` hits.
    #[must_use]
    pub fn limit(mut self, limit: usize) -> RecallQuery {
        self.limit = limit;
        self
    }

    /// The same query with `filters`.
    #[must_use]
    pub fn filters(mut self, filters: RecallFilters) -> RecallQuery {
        self.filters = filters;
        self
    }

    /// Checks the limit and the time range.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the value that is out of range.
    pub fn validate(&self) -> Result<()> {
        if self.limit == 0 || self.limit > MAX_RECALL_LIMIT {
            return Err(Error::invalid_input(format!(
                "recall limit {} is out of range; use 1..={MAX_RECALL_LIMIT}",
                self.limit
            )));
        }
        if let (Some(since), Some(until)) = (self.filters.since, self.filters.until) {
            if since >= until {
                return Err(Error::invalid_input(format!(
                    "recall time range {since} .. {until} is empty; `since` must be before `until`"
                )));
            }
        }
        Ok(())
    }
}

/// The four signals of a hit, each in [0, 1].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Components {
    /// Cosine similarity of the query and the episode's best window, clamped at 0 (0 when the
    /// episode is not embedded yet or no model is available).
    pub vec: f64,
    /// BM25, divided by the best BM25 of the candidate batch (0 when the words do not match).
    pub bm25: f64,
    /// `0.5 ^ (age_hours / half_life_hours)`.
    pub recency: f64,
    /// Overlap of the query's paths and the episode's.
    pub path: f64,
}

/// One recalled episode.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Id, session, kind, summary, time...
    pub header: EpisodeHeader,
    /// The stored content, byte for byte.
    pub content: String,
    /// The episode's file paths.
    pub paths: Vec<StoredPath>,
    /// The weighted sum of the components.
    pub score: f64,
    /// The four signals.
    pub components: Components,
    /// Whether the hit is worth reading: the query terms it holds, its similarity against the
    /// batch, and the verdict.
    pub relevance: Relevance,
}
