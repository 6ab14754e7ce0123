//! The part of the write path that needs no database: everything a turn's rows hold, computed
//! before they are written. The turn stamped and serialized, the episodes the chunker derives
//! from it, each episode's capped content, token estimate, FTS text and path rows (with the hash
//! of a file it read).
//!
//! Splitting it from the writes lets a batch prepare on one core while the writer writes on
//! another (see `pipeline`); a single turn prepares and writes in line. Preparation is a pure
//! function of the tip's state, the session and the options, so both orders store the same rows.

use chrono::{DateTime, Utc};

use super::episodes::{file_content_hash, workspace_file};
use super::fts::FtsRow;
use super::sessions::Session;
use super::workspace::relative_path;
use super::{StoreOptions, fresh_id};
use crate::canonical::{
    CappedContent, Episode, PathAccess, Role, Turn, Usage, cap_content, token_estimate,
};
use crate::error::{Error, Result};

/// One turn ready to be written.
#[derive(Debug)]
pub(crate) struct PreparedTurn {
    /// Its id (given, or minted).
    pub turn_id: String,
    /// Its sequence number in the session.
    pub seq: u64,
    /// Who spoke.
    pub role: Role,
    /// Its time (given, or now).
    pub at: DateTime<Utc>,
    /// The stored turn, with id and time, as JSON.
    pub json: String,
    /// The chunker state the turn met, when this turn keeps a snapshot (see `snapshot`).
    pub chunker_before: Option<String>,
    /// Its usage, for the ledger.
    pub usage: Option<Usage>,
    /// The episodes it completes, in order.
    pub episodes: Vec<PreparedEpisode>,
}

impl PreparedTurn {
    /// `turn` as turn `seq` of `session_id`: the id and time it lacks filled in and the JSON of
    /// the result. The episodes are the caller's to add.
    ///
    /// # Errors
    /// An internal error when the turn cannot be serialized.
    pub(crate) fn stamp(session_id: &str, seq: u64, turn: &Turn) -> Result<(PreparedTurn, Turn)> {
        let turn_id = turn
            .id
            .clone()
            .unwrap_or_else(|| fresh_id("turn_", session_id));
        let at = turn.timestamp.unwrap_or_else(Utc::now);
        let mut stored = turn.clone();
        stored.id = Some(turn_id.clone());
        stored.timestamp = Some(at);
        let json = serde_json::to_string(&stored).map_err(|e| {
            Error::internal(format!("cannot serialize turn {turn_id:?}")).with_source(e)
        })?;
        let prepared = PreparedTurn {
            turn_id,
            seq,
            role: stored.role,
            at,
            json,
            chunker_before: None,
            usage: stored.usage.clone(),
            episodes: Vec::new(),
        };
        Ok((prepared, stored))
    }
}

/// One episode ready to be written.
#[derive(Debug)]
pub(crate) struct PreparedEpisode {
    /// As the chunker (or a rotation, fork or raw output) made it; its whole content.
    pub episode: Episode,
    /// The excerpt and blob id, when the content is over the cap.
    pub capped: Option<CappedContent>,
    /// Tokens of the stored content.
    pub token_estimate: u64,
    /// What the FTS index holds for it.
    pub fts: FtsRow,
    /// Its paths, in order: relative to the session root, with the hash of a file it read.
    pub paths: Vec<PreparedPath>,
}

/// A path row of an episode, beside the [`crate::canonical::ToolPath`] it comes from.
#[derive(Debug)]
pub(crate) struct PreparedPath {
    /// Normalized and relative to the session root (absolute when outside it).
    pub relative: String,
    /// `sha256:<hex>` of the file, for a read when [`StoreOptions::hash_read_files`] is on.
    pub content_hash: Option<String>,
}

impl PreparedEpisode {
    /// `episode` of `session` ready to be written with `options` (cap, file hashes).
    pub(crate) fn new(episode: Episode, session: &Session, options: &StoreOptions) -> Self {
        let capped = cap_content(&episode.content, options.max_episode_bytes);
        let stored = capped
            .as_ref()
            .map_or(episode.content.as_str(), |c| &c.excerpt);
        let token_estimate = token_estimate(stored);
        let fts = FtsRow::of(
            &episode.summary,
            stored,
            episode.tool_name.as_deref(),
            episode.repeats_intent,
        );
        let paths = episode
            .paths
            .iter()
            .map(|path| {
                let relative = relative_path(&session.root, &path.path);
                // A file that vanished or cannot be read just has no hash: the read is still
                // memory.
                let content_hash = (options.hash_read_files && path.access == PathAccess::Read)
                    .then(|| workspace_file(&session.root, &relative))
                    .flatten()
                    .and_then(|on_disk| file_content_hash(&on_disk).ok().flatten());
                PreparedPath {
                    relative,
                    content_hash,
                }
            })
            .collect();
        PreparedEpisode {
            episode,
            capped,
            token_estimate,
            fts,
            paths,
        }
    }

    /// The content the episode row stores: the excerpt of a capped episode, else all of it.
    pub(crate) fn stored_content(&self) -> &str {
        self.capped
            .as_ref()
            .map_or(self.episode.content.as_str(), |c| &c.excerpt)
    }
}
