//! What the workspace index is built from: plain values a store layer fills with a few queries.
//!
//! Everything here is an aggregate or a bounded list, so building the index costs the same for a
//! workspace of a hundred episodes as for one of a hundred thousand: counts and the last activity
//! time, hot files already grouped by path, recent sessions with their first prompt, and the
//! vectors of the most recent embedded episodes for topic clusters.
//!
//! Invariants: [`ClusterInput`] holds exactly one `dim`-sized, finite vector per episode, in one
//! flat buffer (no per-episode allocation, cache-friendly for k-means). It does not normalize
//! or order anything; the builder does.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Everything the index block of one workspace, seen from one session, is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexInput {
    /// Display name of the workspace (typically the repository directory name).
    pub workspace: String,
    /// Episodes stored for the workspace.
    pub episode_count: u64,
    /// Sessions recorded in the workspace.
    pub session_count: u64,
    /// Time of the newest episode, if known.
    pub last_activity: Option<DateTime<Utc>>,
    /// Files touched by tool calls, one entry per path (any order; the builder ranks them).
    pub hot_files: Vec<HotFile>,
    /// Recent sessions (any order; the builder ranks them). A few dozen are plenty.
    pub sessions: Vec<SessionSummary>,
    /// Id of the session the block is built for; it is listed as `current`.
    pub current_session: Option<String>,
    /// Vectors and metadata of recent embedded episodes, for topic clusters.
    pub embedded: ClusterInput,
}

/// A file and how often tool calls touched it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HotFile {
    /// The path, normalized relative to the workspace root when possible.
    pub path: String,
    /// Number of episodes that touched it.
    pub touches: u64,
    /// When it was last touched.
    pub last_touched: DateTime<Utc>,
}

/// A session and what it started with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// Session id (never shown; compared with [`IndexInput::current_session`]).
    pub id: String,
    /// The first prompt the person typed in it, if any.
    pub first_intent: Option<String>,
    /// Time of its newest episode.
    pub last_activity: DateTime<Utc>,
}

/// One embedded episode's metadata, as topic clusters need it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterEpisode {
    /// The episode's one-line summary.
    pub summary: String,
    /// File paths the episode touched (normalized relative form preferred).
    pub paths: Vec<String>,
    /// When the episode happened.
    pub time: DateTime<Utc>,
}

/// Embedded episodes for clustering: a flat `len × dim` buffer of vectors plus one
/// [`ClusterEpisode`] per vector.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterInput {
    dim: usize,
    vectors: Vec<f32>,
    episodes: Vec<ClusterEpisode>,
}

impl ClusterInput {
    /// An empty input for vectors of `dim` components.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when `dim` is zero.
    pub fn new(dim: usize) -> Result<ClusterInput> {
        if dim == 0 {
            return Err(Error::invalid_input(
                "embedding dimension 0 is not valid; pass the model's vector size (e.g. 384)",
            ));
        }
        Ok(ClusterInput {
            dim,
            vectors: Vec::new(),
            episodes: Vec::new(),
        })
    }

    /// An input with no episodes, for workspaces without embeddings.
    pub fn none() -> ClusterInput {
        ClusterInput {
            dim: 1,
            vectors: Vec::new(),
            episodes: Vec::new(),
        }
    }

    /// Adds one episode and its vector (any length-preserving form: the builder normalizes).
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when the vector's length is not `dim` or a component
    /// is NaN or infinite; the input is unchanged then.
    pub fn push(&mut self, vector: &[f32], episode: ClusterEpisode) -> Result<()> {
        if vector.len() != self.dim {
            return Err(Error::invalid_input(format!(
                "embedding of {} components for episode {:?} does not match the dimension {}; \
                 all vectors of one index must come from the same model",
                vector.len(),
                episode.summary,
                self.dim
            )));
        }
        if let Some(at) = vector.iter().position(|x| !x.is_finite()) {
            return Err(Error::invalid_input(format!(
                "embedding component {at} of episode {:?} is {}; re-embed the episode",
                episode.summary, vector[at]
            )));
        }
        self.vectors.extend_from_slice(vector);
        self.episodes.push(episode);
        Ok(())
    }

    /// Vector size.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of episodes.
    pub fn len(&self) -> usize {
        self.episodes.len()
    }

    /// `true` when there are no episodes.
    pub fn is_empty(&self) -> bool {
        self.episodes.is_empty()
    }

    /// The vector of episode `i`, or `None` past the end.
    pub fn vector(&self, i: usize) -> Option<&[f32]> {
        self.vectors.get(i * self.dim..(i + 1) * self.dim)
    }

    /// The episodes, in insertion order.
    pub fn episodes(&self) -> &[ClusterEpisode] {
        &self.episodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn episode(summary: &str) -> ClusterEpisode {
        ClusterEpisode {
            summary: summary.into(),
            paths: vec![],
            time: DateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn push_checks_dimension_and_finiteness() {
        assert_eq!(
            ClusterInput::new(0).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        let mut input = ClusterInput::new(3).unwrap();
        input.push(&[1.0, 0.0, 0.0], episode("a")).unwrap();
        let err = input.push(&[1.0, 0.0], episode("short")).unwrap_err();
        assert!(err.message().contains("2 components"), "{}", err.message());
        let err = input
            .push(&[1.0, f32::NAN, 0.0], episode("nan"))
            .unwrap_err();
        assert!(err.message().contains("component 1"), "{}", err.message());
        assert_eq!(input.len(), 1, "a rejected push changes nothing");
        assert_eq!(input.vector(0), Some(&[1.0, 0.0, 0.0][..]));
        assert_eq!(input.vector(1), None);
    }
}
