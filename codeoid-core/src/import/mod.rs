//! Importing other harnesses' session logs as canonical turns: Claude Code transcripts, Codex
//! CLI rollouts, Gemini CLI chats and SWE-agent trajectories.
//!
//! The importers are pure readers: a file or a folder in, [`ImportedSession`]s of canonical
//! [`Turn`](crate::canonical::Turn)s plus an [`ImportReport`] out. They never write anywhere.
//! [`import_into`] (module `into_store`) is the one writer: it puts each session in its
//! workspace and syncs its turns into the store, so importing again, or importing a log that
//! has grown since, ends exactly as one import of the final log.
//!
//! Guarantees, for every format:
//! - the format is recognized from the content ([`detect_format`]), not the file name;
//! - a malformed line or record is skipped, counted and reported with its location; everything
//!   else is imported, and no input makes an importer panic;
//! - turn ids are derived from the log alone, so the same file always yields the same turns;
//! - subagent conversations become their own sessions, linked to their parent, with usage
//!   flagged `primary: false`;
//! - usage that a log repeats is counted once.
//!
//! `docs/import.md` maps every source field to its canonical place.

mod claude_code;
mod codex;
mod conversation;
mod detect;
mod fields;
mod gemini_cli;
mod into_store;
mod jsonl;
mod report;
mod session;
mod swe_agent;
mod walk;

use std::path::Path;

use serde::Serialize;

pub use detect::detect_format;
pub use into_store::{
    DEFAULT_BATCH_TURNS, DEFAULT_FINISH_AFTER, ImportOptions, ImportSummary, SkippedSession,
    import_into, import_into_while,
};
pub use report::{ImportReport, Issue, MAX_LISTED_ISSUES, Progress, SkippedFile};
pub use session::{ImportedSession, LogFormat, SessionKind, TurnStats};
pub use walk::{check_path, visit_path, visit_path_while};

use crate::error::Result;

/// Everything read from a file or folder.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Import {
    /// The sessions, in the order their files were read (a parent before its subagents).
    pub sessions: Vec<ImportedSession>,
    /// What was read, merged, ignored and skipped.
    pub report: ImportReport,
}

/// Reads a session log, or every session log under a folder, into memory.
///
/// A folder is walked recursively (Claude Code's `projects/<dir>/<session>.jsonl` with its
/// `<session>/subagents/`, Codex's `sessions/YYYY/MM/DD/`, Gemini's `tmp/<hash>/chats/`);
/// files with other extensions than `.jsonl`, `.json` and `.traj` are not looked at, and
/// candidates that are not session logs are listed in [`ImportReport::skipped_files`]. For
/// large trees prefer [`visit_path`], which hands over one session at a time.
///
/// # Errors
/// [`crate::ErrorKind::NotFound`] when `path` does not exist, [`crate::ErrorKind::Io`] when it
/// cannot be read, and, for a single file, [`crate::ErrorKind::Import`] naming it and listing
/// the supported formats when it is not a session log (or is a JSON document that does not
/// parse).
pub fn read_path(path: &Path) -> Result<Import> {
    let mut sessions = Vec::new();
    let report = visit_path(path, &mut |_| {}, &mut |session| {
        sessions.push(session);
        Ok(())
    })?;
    Ok(Import { sessions, report })
}

/// Reads one log already in memory as `format`; `source_path` is only used to name the
/// sessions' source and to locate reported issues (and, for Claude Code, an `agent-*` file
/// name marks a subagent transcript).
///
/// # Errors
/// [`crate::ErrorKind::Import`] when a JSON-document format (Gemini CLI `.json`, SWE-agent
/// `.traj`) does not parse as a whole. Line-oriented formats never fail: bad lines are skipped
/// and reported.
pub fn read_bytes(format: LogFormat, source_path: &Path, bytes: &[u8]) -> Result<Import> {
    let mut report = ImportReport::default();
    let sessions = walk::read_as(format, source_path, bytes, &mut report)?;
    report.files = 1;
    report.bytes = bytes.len() as u64;
    report.count_sessions(&sessions);
    Ok(Import { sessions, report })
}
