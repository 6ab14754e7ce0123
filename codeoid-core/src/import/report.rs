//! The [`ImportReport`]: what an import read, kept, merged, ignored and skipped, with the
//! location and reason of every skipped line (the list capped, the counts exact), and the
//! [`Progress`] figures handed to progress callbacks.
//!
//! Invariant: every input line (or record of a JSON document) is accounted for: it became (part
//! of) a turn, was dropped as a duplicate, was ignored as a non-message record, or was skipped
//! as malformed. Counters only grow; nothing here fails.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};

use super::session::{ImportedSession, TurnStats};

/// How many [`Issue`]s of each list a report keeps; counts beyond it stay exact.
pub const MAX_LISTED_ISSUES: usize = 200;

/// A problem at one place of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// The file.
    #[serde(serialize_with = "lossy_path")]
    pub path: PathBuf,
    /// 1-based line number, for line-oriented formats.
    pub line: Option<u64>,
    /// JSON pointer to the record inside a JSON document (`/messages/3`), for document formats.
    pub pointer: Option<String>,
    /// What was wrong, lowercase.
    pub reason: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(pointer) = &self.pointer {
            write!(f, " {pointer}")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// A file found while walking a folder that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedFile {
    /// The file.
    #[serde(serialize_with = "lossy_path")]
    pub path: PathBuf,
    /// Why it was skipped (unknown format, a prompt-history file, unreadable...).
    pub reason: String,
}

/// Serializes `path` as a string, bytes that are not UTF-8 replaced by U+FFFD. A log's file name
/// need not be UTF-8, and serde's own `Path` impl refuses such a path, which would fail the whole
/// summary after the import was committed; the summary is for people and tools to read, like the
/// `Display` of an [`Issue`], so a lossy name is the right trade.
pub(crate) fn lossy_path<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}

/// Where a record sits in its file, for issue reporting.
#[derive(Debug, Clone, Copy)]
pub(crate) enum At<'a> {
    /// A 1-based line number.
    Line(u64),
    /// A JSON pointer inside a document.
    Pointer(&'a str),
}

/// Everything an import did, for the CLI to print and tests to assert.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportReport {
    /// Files imported (each may yield several sessions).
    pub files: u64,
    /// Bytes of those files.
    pub bytes: u64,
    /// Non-blank lines of line-oriented files plus records of JSON documents.
    pub lines: u64,
    /// Sessions produced, subagents included.
    pub sessions: u64,
    /// Counts over every produced turn.
    pub turns: TurnStats,
    /// Lines or records skipped because they were malformed (bad JSON, unexpected shape).
    pub malformed_lines_skipped: u64,
    /// The first [`MAX_LISTED_ISSUES`] of them, with locations and reasons.
    pub malformed: Vec<Issue>,
    /// Records that carry no conversation (progress, hooks, snapshots, token counts...),
    /// ignored on purpose.
    pub non_message_lines_ignored: u64,
    /// The same, by record type.
    pub non_message_types: BTreeMap<String, u64>,
    /// Lines dropped because an earlier line of the same file had the same id (Claude Code
    /// writes some lines twice).
    pub duplicate_lines_dropped: u64,
    /// Usage reports that repeated one already counted (the same request id on every line of
    /// a response, a Codex token count written twice) and were merged, never summed.
    pub repeated_usage_merged: u64,
    /// Records replaced or removed by later records of the same file (Gemini CLI updates and
    /// rewinds), copies of recorded messages in a Gemini CLI history rewrite (`$set.messages`,
    /// not applied), and messages that only repeated tool results already recorded.
    pub superseded_records: u64,
    /// Content blocks codeoid has no canonical part for; kept verbatim in the turn's
    /// `meta.unsupported_parts`.
    pub unsupported_parts: u64,
    /// Records imported with a repair (an unparsable timestamp dropped, tool arguments that
    /// are not JSON kept as a string...).
    pub warnings: u64,
    /// The first [`MAX_LISTED_ISSUES`] warnings.
    pub warning_list: Vec<Issue>,
    /// Files under an imported folder that were not imported (not a session log, unreadable).
    pub files_skipped: u64,
    /// The first [`MAX_LISTED_ISSUES`] of them, and why.
    pub skipped_files: Vec<SkippedFile>,
}

impl ImportReport {
    pub(crate) fn malformed(&mut self, path: &Path, at: At<'_>, reason: impl Into<String>) {
        self.malformed_lines_skipped += 1;
        if self.malformed.len() < MAX_LISTED_ISSUES {
            self.malformed.push(issue(path, at, reason.into()));
        }
    }

    pub(crate) fn warn(&mut self, path: &Path, at: At<'_>, reason: impl Into<String>) {
        self.warnings += 1;
        if self.warning_list.len() < MAX_LISTED_ISSUES {
            self.warning_list.push(issue(path, at, reason.into()));
        }
    }

    pub(crate) fn ignored(&mut self, record_type: &str) {
        self.non_message_lines_ignored += 1;
        *self
            .non_message_types
            .entry(record_type.to_owned())
            .or_default() += 1;
    }

    pub(crate) fn skip_file(&mut self, path: &Path, reason: impl Into<String>) {
        self.files_skipped += 1;
        if self.skipped_files.len() >= MAX_LISTED_ISSUES {
            return;
        }
        self.skipped_files.push(SkippedFile {
            path: path.to_path_buf(),
            reason: reason.into(),
        });
    }

    /// Adds everything `other` counted and listed (the lists still capped).
    pub(crate) fn merge(&mut self, other: ImportReport) {
        self.files += other.files;
        self.bytes += other.bytes;
        self.lines += other.lines;
        self.sessions += other.sessions;
        self.turns.merge(&other.turns);
        self.malformed_lines_skipped += other.malformed_lines_skipped;
        self.non_message_lines_ignored += other.non_message_lines_ignored;
        for (kind, n) in other.non_message_types {
            *self.non_message_types.entry(kind).or_default() += n;
        }
        self.duplicate_lines_dropped += other.duplicate_lines_dropped;
        self.repeated_usage_merged += other.repeated_usage_merged;
        self.superseded_records += other.superseded_records;
        self.unsupported_parts += other.unsupported_parts;
        self.warnings += other.warnings;
        self.files_skipped += other.files_skipped;
        for (list, more) in [
            (&mut self.malformed, other.malformed),
            (&mut self.warning_list, other.warning_list),
        ] {
            let room = MAX_LISTED_ISSUES.saturating_sub(list.len());
            list.extend(more.into_iter().take(room));
        }
        let room = MAX_LISTED_ISSUES.saturating_sub(self.skipped_files.len());
        self.skipped_files
            .extend(other.skipped_files.into_iter().take(room));
    }

    /// Adds the session and turn counts of `sessions`.
    pub(crate) fn count_sessions(&mut self, sessions: &[ImportedSession]) {
        for session in sessions {
            self.sessions += 1;
            self.turns.merge(&session.stats());
        }
    }
}

fn issue(path: &Path, at: At<'_>, reason: String) -> Issue {
    let (line, pointer) = match at {
        At::Line(n) => (Some(n), None),
        At::Pointer(p) => (None, Some(p.to_owned())),
    };
    Issue {
        path: path.to_path_buf(),
        line,
        pointer,
        reason,
    }
}

/// Progress of a folder import, handed to the callback after each file.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// Files finished (imported or skipped).
    pub files_done: u64,
    /// Files found.
    pub files_total: u64,
    /// Bytes of the finished files.
    pub bytes_done: u64,
    /// Bytes of all files found.
    pub bytes_total: u64,
    /// The file just finished (the root before the first file).
    pub current: &'a Path,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn paths_that_are_not_utf8_serialize_lossily() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;

        let path = Path::new(OsStr::from_bytes(b"/logs/s\xff.jsonl"));
        let mut report = ImportReport::default();
        report.malformed(path, At::Line(3), "not json");
        report.warn(path, At::Pointer("/messages/1"), "timestamp dropped");
        report.skip_file(path, "unknown format");
        let json = serde_json::to_value(&report).expect("a report always serializes");
        for value in [
            &json["malformed"][0]["path"],
            &json["warning_list"][0]["path"],
            &json["skipped_files"][0]["path"],
        ] {
            assert_eq!(value, "/logs/s\u{fffd}.jsonl", "{json}");
        }
    }
}
