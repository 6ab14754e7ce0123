//! Episodes: the atomic, verbatim unit of memory derived from canonical turns (DESIGN §1).
//!
//! This module owns the [`Episode`] value the chunker produces, its vocabulary ([`EpisodeKind`],
//! [`EpisodeStatus`], [`PathAccess`]), the deterministic episode id, the one-line summary rules and
//! the oversize cap (a head/tail excerpt with an explicit marker naming the raw blob that keeps the
//! whole text).
//!
//! Invariants:
//! - An episode id is `ep_` + 4 lowercase hex digits of `sha256(session id)` + 16 of
//!   `sha256(session id, anchor)`, where the anchor names what produced the episode (the turn
//!   that made a tool call and the call's id, a turn id and part index...). The same turns
//!   recorded twice yield the same ids, so re-imports cannot duplicate episodes. The 16 digits make an id unique; the session's 4 lead
//!   them so that the episodes a session records sit together in the store's index of ids (a
//!   batch of fully random ids dirtied a page of that index per episode: about a sixth of
//!   ingest). Raw-output episodes (`Store::record_raw_output`) are not derived from turns and get
//!   `ep_` + 16 random hex digits.
//! - A blob id is `blob_` + 32 hex digits of the sha256 of its bytes: identical outputs share a blob.
//! - Summaries are one line, whitespace collapsed, at most [`SUMMARY_MAX_CHARS`] characters.
//!
//! It deliberately knows nothing about SQLite, workspaces or relative paths: the store adds those
//! when it persists an episode.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Longest summary line, in characters.
pub const SUMMARY_MAX_CHARS: usize = 120;

/// Longest tool argument shown inside a `tool_call` summary, in characters.
pub const SUMMARY_ARG_MAX_CHARS: usize = 60;

/// What produced an episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EpisodeKind {
    /// A tool call together with its result (or a note that no result came).
    ToolCall,
    /// A user prompt and the assistant's direct answer to it.
    UserTurn,
    /// Assistant text with no pending prompt, such as the final answer after tool calls.
    AssistantTurn,
    /// An error the harness reported (API error, tool crash).
    Error,
    /// A harness-written summary of earlier context (Claude Code compaction); not a user intent.
    Compaction,
    /// A rotation of the session's backing context (written by the rotation code).
    Rotation,
    /// The start of a fork: which session and turn this session's copied conversation came
    /// from (written by the fork code).
    Fork,
    /// Text the harness injected as a user message (`meta.is_meta`: environment details,
    /// caveats, hook reminders such as a compiler's errors after an edit); kept verbatim, never
    /// a user intent, and it neither ends an exchange nor cancels its pending calls.
    Context,
}

impl EpisodeKind {
    /// Every kind, for exhaustive tests and schema checks.
    pub const ALL: [EpisodeKind; 8] = [
        EpisodeKind::ToolCall,
        EpisodeKind::UserTurn,
        EpisodeKind::AssistantTurn,
        EpisodeKind::Error,
        EpisodeKind::Compaction,
        EpisodeKind::Rotation,
        EpisodeKind::Fork,
        EpisodeKind::Context,
    ];

    /// The stable snake_case name stored in the database and shown to models.
    pub const fn as_str(self) -> &'static str {
        match self {
            EpisodeKind::ToolCall => "tool_call",
            EpisodeKind::UserTurn => "user_turn",
            EpisodeKind::AssistantTurn => "assistant_turn",
            EpisodeKind::Error => "error",
            EpisodeKind::Compaction => "compaction",
            EpisodeKind::Rotation => "rotation",
            EpisodeKind::Fork => "fork",
            EpisodeKind::Context => "context",
        }
    }

    /// The kind named `name`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the unknown kind.
    pub fn parse(name: &str) -> Result<EpisodeKind> {
        EpisodeKind::ALL
            .into_iter()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| {
                Error::invalid_input(format!(
                    "unknown episode kind {name:?}; expected one of tool_call, user_turn, \
                     assistant_turn, error, compaction, rotation, fork, context"
                ))
            })
    }
}

impl std::fmt::Display for EpisodeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How an episode ended. Only tool calls can fail or be cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EpisodeStatus {
    /// Complete: the result (or the text) is there.
    Ok,
    /// The tool reported failure (`is_error`); the error output is the result.
    Failed,
    /// No result ever came: a new prompt arrived or the session finished first.
    Cancelled,
}

impl EpisodeStatus {
    /// `"ok"`, `"failed"` or `"cancelled"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            EpisodeStatus::Ok => "ok",
            EpisodeStatus::Failed => "failed",
            EpisodeStatus::Cancelled => "cancelled",
        }
    }

    /// The status named `name`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the unknown status.
    pub fn parse(name: &str) -> Result<EpisodeStatus> {
        match name {
            "ok" => Ok(EpisodeStatus::Ok),
            "failed" => Ok(EpisodeStatus::Failed),
            "cancelled" => Ok(EpisodeStatus::Cancelled),
            other => Err(Error::invalid_input(format!(
                "unknown episode status {other:?}; expected ok, failed or cancelled"
            ))),
        }
    }
}

/// What a tool did with a file path it was given, judged from the tool's name and input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathAccess {
    /// The tool read the file (`Read`, `read_file`, `view`...). `recall_file` looks for these.
    Read,
    /// The tool created or changed the file (`Write`, `Edit`, `apply_patch`...).
    Write,
    /// The path or pattern scoped a search or listing (`Grep`, `Glob`, `ls`...).
    Search,
    /// Anything else.
    Other,
}

impl PathAccess {
    /// `"read"`, `"write"`, `"search"` or `"other"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PathAccess::Read => "read",
            PathAccess::Write => "write",
            PathAccess::Search => "search",
            PathAccess::Other => "other",
        }
    }

    /// The access named `name`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the unknown access.
    pub fn parse(name: &str) -> Result<PathAccess> {
        match name {
            "read" => Ok(PathAccess::Read),
            "write" => Ok(PathAccess::Write),
            "search" => Ok(PathAccess::Search),
            "other" => Ok(PathAccess::Other),
            other => Err(Error::invalid_input(format!(
                "unknown path access {other:?}; expected read, write, search or other"
            ))),
        }
    }
}

/// A file path (or search pattern) taken from a tool input, exactly as the tool was given it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPath {
    /// The path as it appeared in the tool input.
    pub path: String,
    /// What the tool did with it.
    pub access: PathAccess,
}

/// One episode as the chunker produces it, before the store adds workspace-relative paths,
/// the token estimate and the oversize cap.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    /// Deterministic id (see [`episode_id`]).
    pub id: String,
    /// What produced it.
    pub kind: EpisodeKind,
    /// The tool name, for `tool_call` episodes.
    pub tool_name: Option<String>,
    /// The canonical tool call id, for `tool_call` episodes.
    pub call_id: Option<String>,
    /// How it ended.
    pub status: EpisodeStatus,
    /// One line, at most [`SUMMARY_MAX_CHARS`] characters.
    pub summary: String,
    /// The verbatim content in the layout of DESIGN §1.
    pub content: String,
    /// File paths and patterns from the tool input, in input order, without duplicates.
    pub paths: Vec<ToolPath>,
    /// When the episode became complete (the result arrived, the answer was given...).
    pub created_at: DateTime<Utc>,
    /// Sequence number, within its session, of the turn that completed the episode.
    pub turn_seq: u64,
    /// A `tool_call` whose `# User intent` an earlier call of the same exchange already carries:
    /// the prompt is stored on every call (DESIGN §1), but the FTS index holds it whole only on
    /// the first and only its head on the repeats (see `store::search_text`). `false` for every
    /// other episode.
    pub repeats_intent: bool,
}

/// The deterministic id of the episode that `anchor` produced in `session_id`: its session's
/// cluster (2 bytes of the session id's hash), then 8 bytes of the hash of both.
pub fn episode_id(session_id: &str, anchor: &str) -> String {
    let cluster = Sha256::digest(session_id.as_bytes());
    let mut hasher = Sha256::new();
    hasher.update(session_id.as_bytes());
    hasher.update([0u8]);
    hasher.update(anchor.as_bytes());
    format!(
        "ep_{}{}",
        hex_prefix(&cluster, 2),
        hex_prefix(&hasher.finalize(), 8)
    )
}

/// The content-addressed id of a raw blob holding `bytes`.
pub fn blob_id(bytes: &[u8]) -> String {
    format!("blob_{}", hex_prefix(&Sha256::digest(bytes), 16))
}

/// Lowercase hex of the first `bytes` bytes of `digest`.
pub(crate) fn hex_prefix(digest: &[u8], bytes: usize) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes * 2);
    for b in digest.iter().take(bytes) {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// `text` on one line: runs of whitespace become one space, ends trimmed, then cut to `max`
/// characters (the last one an ellipsis when something was cut).
pub fn one_line(text: &str, max: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate_chars(&collapsed, max)
}

/// `text` cut to at most `max` characters, ending in `…` when something was cut.
pub fn truncate_chars(text: &str, max: usize) -> String {
    if max == 0 {
        return String::new();
    }
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some(_) => {
            let cut = text
                .char_indices()
                .nth(max - 1)
                .map_or(text.len(), |(i, _)| i);
            format!("{}…", &text[..cut])
        }
    }
}

/// `text` that a caller passed, as a message repeats it: whole when it has at most `max`
/// characters, else its start and its length (`abc… (1048576 characters)`), so a pasted
/// megabyte does not come back in an error or a tool's answer.
pub(crate) fn echo_chars(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max || text.char_indices().nth(max).is_none() {
        return text.into();
    }
    format!(
        "{} ({} characters)",
        truncate_chars(text, max),
        text.chars().count()
    )
    .into()
}

/// The first non-blank line of `text`, as a summary.
pub fn first_line_summary(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    one_line(line, SUMMARY_MAX_CHARS)
}

/// `chars / 4`, rounded up: the token estimate used when no tokenizer is configured.
pub fn token_estimate(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// The result of capping an oversize episode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CappedContent {
    /// Head, marker, tail: what the episode's `content` holds.
    pub excerpt: String,
    /// Id of the blob that must hold the whole original content ([`blob_id`] of it).
    pub blob_id: String,
}

/// Smallest accepted cap: below this the marker alone would not fit with useful context.
pub const MIN_CAP_BYTES: usize = 1024;

/// Caps `content` at `max_bytes` (UTF-8 bytes): `None` when it fits; otherwise a head and a tail
/// around an explicit marker that names the omitted byte count and the blob holding everything.
///
/// The excerpt never exceeds `max_bytes` (for `max_bytes >=` [`MIN_CAP_BYTES`]) and never splits
/// a character.
pub fn cap_content(content: &str, max_bytes: usize) -> Option<CappedContent> {
    if content.len() <= max_bytes {
        return None;
    }
    let blob_id = blob_id(content.as_bytes());
    // Reserve room for the marker with the largest numbers it can contain.
    let marker_room = marker(content.len(), content.len(), &blob_id).len();
    let budget = max_bytes.saturating_sub(marker_room);
    let head_end = floor_char_boundary(content, budget / 2);
    let tail_start = ceil_char_boundary(content, content.len() - (budget - budget / 2));
    let omitted = tail_start - head_end;
    let excerpt = format!(
        "{}{}{}",
        &content[..head_end],
        marker(omitted, content.len(), &blob_id),
        &content[tail_start..]
    );
    Some(CappedContent { excerpt, blob_id })
}

/// `excerpt` (a capped episode's stored content, or part of it) with the blob pointer of its cap
/// marker replaced by `pointer` (such as `get_episode("ep_…") pages`, for a model that has no
/// tool reading blobs); borrowed unchanged when it holds no line of [`cap_content`]'s marker.
pub(crate) fn point_cap_marker<'a>(excerpt: &'a str, pointer: &str) -> std::borrow::Cow<'a, str> {
    const OPEN: &str = "\n\n[codeoid: ";
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let found = excerpt.match_indices(OPEN).find_map(|(at, _)| {
        let start = at + OPEN.len();
        let end = start + excerpt[start..].find('\n')?;
        let rest = excerpt[start..end].strip_suffix(" holds the whole episode]")?;
        let (counts, blob) = rest.split_once(" bytes omitted here; raw blob ")?;
        let (omitted, total) = counts.split_once(" of ")?;
        let hex = blob.strip_prefix("blob_")?;
        let shaped = digits(omitted)
            && digits(total)
            && digits_or_hex(hex)
            && excerpt[end..].starts_with("\n\n");
        shaped.then(|| (start + counts.len() + " bytes omitted here; ".len(), end))
    });
    match found {
        Some((from, to)) => format!(
            "{}{pointer} the whole episode]{}",
            &excerpt[..from],
            &excerpt[to..]
        )
        .into(),
        None => excerpt.into(),
    }
}

fn digits_or_hex(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit())
}

fn marker(omitted: usize, total: usize, blob_id: &str) -> String {
    format!(
        "\n\n[codeoid: {omitted} of {total} bytes omitted here; raw blob {blob_id} holds the \
         whole episode]\n\n"
    )
}

fn floor_char_boundary(s: &str, mut index: usize) -> usize {
    index = index.min(s.len());
    while !s.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char_boundary(s: &str, mut index: usize) -> usize {
    index = index.min(s.len());
    while !s.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_marker_can_point_at_another_reader() {
        let content = format!("{}{}", "a".repeat(3_000), "b".repeat(3_000));
        let capped = cap_content(&content, 2_000).unwrap();
        let pointed = point_cap_marker(&capped.excerpt, "get_episode(\"ep_1\") pages");
        assert!(
            pointed.contains(
                " bytes omitted here; get_episode(\"ep_1\") pages the whole episode]\n\n"
            ),
            "{pointed}"
        );
        assert!(!pointed.contains(&capped.blob_id));
        let expected = capped.excerpt.replace(
            &format!("raw blob {} holds", capped.blob_id),
            "get_episode(\"ep_1\") pages",
        );
        assert_eq!(pointed, expected);
        // Text that only looks like part of a marker is left alone.
        let lookalike =
            "see [codeoid: 5 of 9 bytes omitted here; raw blob blob_zz holds the whole episode]";
        assert_eq!(point_cap_marker(lookalike, "x"), lookalike);
        assert_eq!(point_cap_marker("plain", "x"), "plain");
    }

    #[test]
    fn ids_are_deterministic_and_distinct() {
        let a = episode_id("ses_1", "call\0toolu_1");
        assert_eq!(a, episode_id("ses_1", "call\0toolu_1"));
        assert_ne!(a, episode_id("ses_2", "call\0toolu_1"));
        assert_ne!(a, episode_id("ses_1", "call\0toolu_2"));
        assert!(a.starts_with("ep_") && a.len() == 23, "{a}");
        assert!(
            a[3..]
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        let b = blob_id(b"hello");
        assert_eq!(b.len(), 5 + 32);
        assert_eq!(b, blob_id(b"hello"));
    }

    #[test]
    fn a_sessions_ids_share_their_lead_and_differ_after_it() {
        let ids: Vec<String> = (0..200)
            .map(|i| episode_id("ses_cluster", &format!("call\0toolu_{i}")))
            .collect();
        assert!(ids.iter().all(|id| id[..7] == ids[0][..7]), "{ids:?}");
        let unique: std::collections::HashSet<&str> = ids.iter().map(|id| &id[7..]).collect();
        assert_eq!(unique.len(), ids.len());
        // Sessions spread over the clusters (200 sessions in 65,536 leads: nearly all distinct).
        let leads: std::collections::HashSet<String> = (0..200)
            .map(|i| episode_id(&format!("ses_{i}"), "prompt\0t0")[..7].to_owned())
            .collect();
        assert!(leads.len() > 190, "{}", leads.len());
    }

    #[test]
    fn kinds_and_statuses_round_trip() {
        for kind in EpisodeKind::ALL {
            assert_eq!(EpisodeKind::parse(kind.as_str()).unwrap(), kind);
        }
        for s in [
            EpisodeStatus::Ok,
            EpisodeStatus::Failed,
            EpisodeStatus::Cancelled,
        ] {
            assert_eq!(EpisodeStatus::parse(s.as_str()).unwrap(), s);
        }
        let err = EpisodeKind::parse("tool").unwrap_err();
        assert!(err.message().contains("\"tool\""), "{err}");
    }

    #[test]
    fn one_line_collapses_and_truncates() {
        assert_eq!(one_line("  fix\n the   bug\t ", 120), "fix the bug");
        assert_eq!(one_line("abcdef", 4), "abc…");
        assert_eq!(one_line("abcd", 4), "abcd");
        assert_eq!(one_line("ééééé", 3).chars().count(), 3);
        assert_eq!(first_line_summary("\n\n  Error: boom\nmore"), "Error: boom");
        assert_eq!(token_estimate("abcde"), 2);
        assert_eq!(token_estimate(""), 0);
    }

    #[test]
    fn cap_keeps_head_and_tail_with_a_marker() {
        let content: String = (0..5000).map(|i| format!("line {i} ✓\n")).collect();
        let capped = cap_content(&content, 4096).unwrap();
        assert!(capped.excerpt.len() <= 4096, "{}", capped.excerpt.len());
        assert!(capped.excerpt.starts_with("line 0 ✓\nline 1 ✓\n"));
        assert!(capped.excerpt.ends_with("line 4999 ✓\n"));
        assert!(capped.excerpt.contains(&capped.blob_id));
        assert!(
            capped
                .excerpt
                .contains(&format!("of {} bytes omitted", content.len()))
        );
        assert_eq!(capped.blob_id, blob_id(content.as_bytes()));
        assert!(cap_content("short", 4096).is_none());
    }
}
