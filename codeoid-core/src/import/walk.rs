//! Walking a file or folder: finding candidate logs, reading each with its format's reader,
//! linking subagents to the calls that started them, and reporting progress.
//!
//! Order is deterministic: in each folder, files sorted by name come first (ordinary files,
//! then `agent-*` files), then sub-folders, so a Claude Code `<session>.jsonl` is read before
//! its `<session>/subagents/` and the subagents can be linked to their Task call through the
//! parent's `meta.agent_tool_calls`.
//!
//! Only `.jsonl`, `.json` and `.traj` files are candidates; symlinked folders are not followed
//! (no cycles). In a folder, a candidate that is not a session log, or cannot be read, is
//! listed in the report and skipped; a single file given directly is an error instead.
//!
//! A Gemini CLI chat resumed from an old `session-X.json` continues in `session-X.jsonl` beside
//! it, which starts with every message of the `.json` (Gemini CLI leaves the `.json` in place).
//! So a `.jsonl` is read before the `.json` of the same name, and a Gemini `.json` whose
//! sessions its `.jsonl` sibling already gave is skipped and listed, never imported twice.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::detect::{self, Sniffed};
use super::report::{ImportReport, Progress};
use super::session::{ImportedSession, LogFormat, SessionKind};
use super::{claude_code, codex, gemini_cli, swe_agent};
use crate::error::{Error, Result};

const EXTENSIONS: [&str; 3] = ["jsonl", "json", "traj"];

/// Reads a session log, or every session log under a folder, handing each session to
/// `on_session` as soon as its file is read and calling `on_progress` before the first file
/// and after each one (for a progress bar over files and bytes).
///
/// Sessions of one file arrive together, the main session before its subagents. An error
/// returned by `on_session` stops the walk and is returned as is.
///
/// # Errors
/// [`crate::ErrorKind::NotFound`] when `path` does not exist,
/// [`crate::ErrorKind::InvalidInput`] when it is neither a file nor a folder (a named pipe, a
/// device), [`crate::ErrorKind::Io`] when it (or, for a folder, its top level) cannot be read,
/// [`crate::ErrorKind::Import`] when a single file is not a supported session log, and whatever
/// `on_session` returns.
pub fn visit_path(
    path: &Path,
    on_progress: &mut dyn FnMut(&Progress<'_>),
    on_session: &mut dyn FnMut(ImportedSession) -> Result<()>,
) -> Result<ImportReport> {
    visit_path_while(path, on_progress, &mut || true, on_session)
}

/// What an import of `path` would say of it before reading anything: a file or a folder is
/// fine (its metadata is returned); anything else is the error [`visit_path`] gives, so a
/// caller can refuse a bad path before it creates a store to import into.
///
/// # Errors
/// [`crate::ErrorKind::NotFound`] when `path` does not exist, [`crate::ErrorKind::InvalidInput`]
/// when it is neither a file nor a folder (a named pipe, which would block the import, or a
/// device such as `/dev/zero`, which never ends), [`crate::ErrorKind::Io`] when it cannot be
/// inspected.
pub fn check_path(path: &Path) -> Result<std::fs::Metadata> {
    let metadata = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::not_found(format!(
                "no such file or directory: {}; check the path",
                path.display()
            ))
            .with_source(e)
        } else if path.as_os_str().as_encoded_bytes().contains(&0) {
            Error::invalid_input(format!(
                "the import path {:?} holds a NUL byte, which no file name can",
                path.display().to_string()
            ))
        } else {
            Error::io("inspect", path, e)
        }
    })?;
    if !metadata.is_dir() && !metadata.is_file() {
        return Err(Error::invalid_input(format!(
            "{} is neither a file nor a folder (a pipe, a device or a socket); give a session \
             log file or a folder of them",
            path.display()
        )));
    }
    Ok(metadata)
}

/// [`visit_path`], asking `keep_going` before each file: when it answers `false` the walk ends
/// there and returns what it read until then (for a caller that can be interrupted).
///
/// # Errors
/// As [`visit_path`].
pub fn visit_path_while(
    path: &Path,
    on_progress: &mut dyn FnMut(&Progress<'_>),
    keep_going: &mut dyn FnMut() -> bool,
    on_session: &mut dyn FnMut(ImportedSession) -> Result<()>,
) -> Result<ImportReport> {
    let mut report = ImportReport::default();
    let metadata = check_path(path)?;
    let single = !metadata.is_dir();
    let files: Vec<(PathBuf, u64)> = if single {
        vec![(path.to_path_buf(), metadata.len())]
    } else {
        let mut found = Vec::new();
        let top = std::fs::read_dir(path).map_err(|e| Error::io("list", path, e))?;
        collect(top, &mut found, &mut report);
        found
    };
    let mut progress = Progress {
        files_done: 0,
        files_total: files.len() as u64,
        bytes_done: 0,
        bytes_total: files.iter().map(|(_, size)| size).sum(),
        current: path,
    };
    on_progress(&progress);

    let mut agent_calls: HashMap<(String, String), String> = HashMap::new();
    // Gemini `.jsonl` file → the session ids it gave.
    let mut gemini_lines: HashMap<PathBuf, Vec<String>> = HashMap::new();
    for (file, size) in &files {
        if !keep_going() {
            break;
        }
        let mut read = ImportReport::default();
        match read_one(file).and_then(|(format, bytes)| {
            let sessions = read_as(format, file, &bytes, &mut read)?;
            Ok((format, bytes.len(), sessions))
        }) {
            Ok((format, len, sessions)) => {
                if let Some(jsonl) = continued_in(file, format, &sessions, &gemini_lines) {
                    report.skip_file(
                        file,
                        format!(
                            "superseded by {}: Gemini CLI continued this chat there when it was \
                             resumed, and that file holds every message of this one",
                            jsonl.display()
                        ),
                    );
                } else {
                    if format == LogFormat::GeminiCli && has_extension(file, "jsonl") {
                        let ids = sessions.iter().map(|s| s.session_id.clone()).collect();
                        gemini_lines.insert(file.clone(), ids);
                    }
                    report.merge(read);
                    report.files += 1;
                    report.bytes += len as u64;
                    report.count_sessions(&sessions);
                    for mut session in sessions {
                        link_subagent(&mut session, &mut agent_calls);
                        on_session(session)?;
                    }
                }
            }
            Err(e) if !single => report.skip_file(file, e.message()),
            Err(e) => return Err(e),
        }
        progress.files_done += 1;
        progress.bytes_done += size;
        progress.current = file;
        on_progress(&progress);
    }
    Ok(report)
}

/// The `.jsonl` sibling that continues the Gemini CLI chat `file` (a `.json`), when it was read
/// already and gave every session `file` gives.
fn continued_in(
    file: &Path,
    format: LogFormat,
    sessions: &[ImportedSession],
    gemini_lines: &HashMap<PathBuf, Vec<String>>,
) -> Option<PathBuf> {
    if format != LogFormat::GeminiCli || !has_extension(file, "json") || sessions.is_empty() {
        return None;
    }
    let jsonl = file.with_extension("jsonl");
    let ids = gemini_lines.get(&jsonl)?;
    sessions
        .iter()
        .all(|s| ids.contains(&s.session_id))
        .then_some(jsonl)
}

fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension().is_some_and(|e| e == ext)
}

/// Reads `file` and recognizes its format.
fn read_one(file: &Path) -> Result<(LogFormat, Vec<u8>)> {
    let bytes = detect::read_file(file)?;
    match detect::sniff(&bytes) {
        Sniffed::Format(format) => Ok((format, bytes)),
        other => Err(detect::unrecognized(file, &other)),
    }
}

/// Runs the reader of `format` over `bytes`.
pub(super) fn read_as(
    format: LogFormat,
    path: &Path,
    bytes: &[u8],
    report: &mut ImportReport,
) -> Result<Vec<ImportedSession>> {
    match format {
        LogFormat::ClaudeCode => Ok(claude_code::read(path, bytes, report)),
        LogFormat::Codex => Ok(codex::read(path, bytes, report)),
        LogFormat::GeminiCli => gemini_cli::read(path, bytes, report),
        LogFormat::SweAgent => swe_agent::read(path, bytes, report),
    }
}

/// Remembers a main session's agent → Task call links and applies them to subagents read
/// later.
fn link_subagent(
    session: &mut ImportedSession,
    agent_calls: &mut HashMap<(String, String), String>,
) {
    if session.kind == SessionKind::Main {
        if let Some(Value::Object(links)) = session.meta.get("agent_tool_calls") {
            for (agent, call) in links {
                if let Some(call) = call.as_str() {
                    agent_calls
                        .insert((session.session_id.clone(), agent.clone()), call.to_owned());
                }
            }
        }
        return;
    }
    if session.parent_tool_call_id.is_some() {
        return;
    }
    if let (Some(parent), Some(agent)) = (&session.parent_session_id, &session.agent_id) {
        session.parent_tool_call_id = agent_calls.get(&(parent.clone(), agent.clone())).cloned();
    }
}

/// Appends the candidate files under a folder, in walk order.
fn collect(entries: std::fs::ReadDir, out: &mut Vec<(PathBuf, u64)>, report: &mut ImportReport) {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            dirs.push(path);
        } else if is_candidate(&path) {
            // Follows a symlink to a file; its size is what will be read.
            if let Ok(meta) = std::fs::metadata(&path) {
                if meta.is_file() {
                    files.push((path, meta.len()));
                }
            }
        }
    }
    files.sort_by_key(|(path, _)| (is_agent_file(path), jsonl_first(path)));
    dirs.sort();
    out.extend(files);
    for dir in dirs {
        match std::fs::read_dir(&dir) {
            Ok(entries) => collect(entries, out, report),
            Err(e) => report.skip_file(&dir, format!("cannot list the folder: {e}")),
        }
    }
}

/// The sort key of a file name: itself, except that `X.json` sorts right after `X.jsonl` (a
/// Gemini CLI chat continued in the `.jsonl` is read from it first).
fn jsonl_first(path: &Path) -> std::ffi::OsString {
    let mut key = path.as_os_str().to_owned();
    if has_extension(path, "json") {
        key.push("l\u{1}");
    }
    key
}

fn is_candidate(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e))
}

fn is_agent_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("agent-"))
}
