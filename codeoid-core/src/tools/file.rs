//! `recall_file`'s answer: the most recent read of a file and whether the file on disk is still
//! what was read, by content hash.
//!
//! The hash of a read is recorded when a live session records it (see
//! `MemoryConfig::hash_live_reads`); imported reads have none, and then the answer is "unknown",
//! never a guess. The comparison reads the file under the workspace root (or the absolute path
//! the read named) as it is now.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::canonical::PathAccess;
use crate::canonical::one_line;
use crate::canonical::tool_input::{command_line, files_of};
use crate::store::{EpisodeHeader, StoredEpisode, StoredPath, file_content_hash};

/// Whether a file still has the content it had when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskState {
    /// Same content hash as at the read.
    Unchanged,
    /// A different content hash.
    Changed,
    /// The file is gone.
    Deleted,
    /// Cannot tell; the reason says why (no hash recorded, root not readable, file too large).
    Unknown(String),
}

/// The most recent read of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRecall {
    /// The episode that read it, whole.
    pub episode: StoredEpisode,
    /// The path row that matched (its `content_hash` is the file at the read).
    pub path: StoredPath,
    /// The file on disk now, compared with the read.
    pub disk: DiskState,
    /// The most recent episode that wrote the file after that read, if memory has one.
    pub later_write: Option<EpisodeHeader>,
    /// What part of the file the read covered, when it may not have been all of it (see
    /// [`read_part`]).
    pub part: Option<ReadPart>,
    /// The latest read, when it may hold only part of the file and this earlier whole read of
    /// the same content (the same recorded hash) was shown instead.
    pub passed_over: Option<PassedOver>,
}

/// A later read of a file that `recall_file` passed over for an earlier whole read of the same
/// content: its recorded content hash is the whole read's, and it may hold only part.
#[derive(Debug, Clone, PartialEq)]
pub struct PassedOver {
    /// The later read.
    pub header: EpisodeHeader,
    /// What part of the file it may hold.
    pub part: ReadPart,
}

/// How much of a file a read covered, when it may not have been all of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadPart {
    /// The harness recorded the window it returned (Claude Code's `toolUseResult.file`): lines
    /// `first` to `last` (1-based) of a file of `total` lines.
    Lines {
        /// First line returned.
        first: u64,
        /// Last line returned.
        last: u64,
        /// Lines in the file.
        total: u64,
    },
    /// Nothing recorded the window; the call's range arguments as given (`offset: 120, limit:
    /// 50`). The file's length is unknown, so the read may still have covered all of it.
    Arguments(String),
    /// A shell command that may show only part of a file it reads (`head`, `tail`, a `sed -n`
    /// script, a later pipeline stage), as the call gave it.
    Command(String),
}

impl std::fmt::Display for ReadPart {
    /// What `recall_file` tells the model after `- part: `.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadPart::Lines { first, last, total } => write!(
                f,
                "this read holds lines {first}–{last} of {total} only; read the file for the rest"
            ),
            ReadPart::Arguments(args) => write!(
                f,
                "this read was called with range arguments ({args}) and may hold only part of \
                 the file"
            ),
            ReadPart::Command(command) => write!(
                f,
                "this read was the shell command `{command}`, which may show only part of the \
                 file"
            ),
        }
    }
}

/// Arguments of a file read that select part of the file, in the order they are shown: Claude
/// Code's, Codex's and Gemini CLI's `offset`/`limit`, Claude Code's `pages` (of a PDF), the
/// Anthropic text editor's `view_range`, and the `start_line`/`end_line` some harnesses use.
const RANGE_KEYS: [&str; 6] = [
    "offset",
    "limit",
    "pages",
    "view_range",
    "start_line",
    "end_line",
];

/// Longest shell command a `- part:` line repeats.
const PART_COMMAND_MAX_CHARS: usize = 120;

/// What part of the file a read with `input` covered, when it may not have been the whole:
/// from `recorded` (the harness's own record of the read, as Claude Code's importer keeps it in
/// the results turn's `meta.tool_use_results`) when it says how many lines of how many were
/// returned, else, for a shell command that reads files (`cat`, `sed -n`, `head`…), from the
/// command, else from the range arguments of `input`. `None` for a whole-file read, including
/// `cat f` or `nl -ba f`, and arguments that only name the start (`offset` 0 or 1, `start_line`
/// 1 without an end) or `view_range` `[1, -1]`. `given` is the file as the input names it (a
/// stored path's `given`): of a command reading several files (`cat a.py && head -3 b.py`) only
/// that file's read counts; `None`, or a file the command does not name, counts any of them.
pub fn read_part(input: &Value, recorded: Option<&Value>, given: Option<&str>) -> Option<ReadPart> {
    let file = recorded.and_then(|r| r.get("file"));
    let number = |key: &str| file.and_then(|f| f.get(key)).and_then(Value::as_u64);
    if let (Some(lines), Some(total)) = (number("numLines"), number("totalLines")) {
        let first = number("startLine").unwrap_or(1).max(1);
        if first == 1 && lines >= total {
            return None;
        }
        if lines > 0 {
            // Numbers from a log file: a hand-edited one must not overflow.
            let last = first.saturating_add(lines - 1);
            return Some(ReadPart::Lines { first, last, total });
        }
    }
    if let Some(line) = command_line(input) {
        let workdir = input.get("workdir").and_then(Value::as_str);
        let mut reads: Vec<_> = files_of(&line, workdir)
            .into_iter()
            .filter(|f| f.access == PathAccess::Read)
            .collect();
        if given.is_some_and(|given| reads.iter().any(|f| f.path == given)) {
            reads.retain(|f| Some(f.path.as_str()) == given);
        }
        if !reads.is_empty() {
            return reads
                .iter()
                .any(|f| f.partial)
                .then(|| ReadPart::Command(one_line(&line, PART_COMMAND_MAX_CHARS)));
        }
    }
    let has = |key: &str| input.get(key).is_some_and(|v| !v.is_null());
    let bounded = has("limit") || has("end_line");
    let at_start = |v: &Value| v.as_i64().is_some_and(|n| n <= 1);
    let given: Vec<String> = RANGE_KEYS
        .iter()
        .filter_map(|key| {
            let value = input.get(key).filter(|v| !v.is_null())?;
            let whole = match *key {
                "offset" | "start_line" => !bounded && at_start(value),
                "view_range" => value
                    .as_array()
                    .is_some_and(|r| r.len() == 2 && at_start(&r[0]) && r[1].as_i64() == Some(-1)),
                _ => false,
            };
            (!whole).then(|| format!("{key}: {value}"))
        })
        .collect();
    (!given.is_empty()).then(|| ReadPart::Arguments(given.join(", ")))
}

/// Compares the file `path` names (relative to `root` unless absolute) with the hash recorded
/// at the read.
pub fn disk_state(root: &Path, path: &StoredPath) -> DiskState {
    let Some(recorded) = &path.content_hash else {
        return DiskState::Unknown(
            "no content hash was recorded for that read: imported sessions have none, and a \
             live read has none when the file was missing, too large or outside the workspace \
             root then"
                .to_owned(),
        );
    };
    let file = if Path::new(&path.relative).is_absolute() {
        PathBuf::from(&path.relative)
    } else {
        if !root.is_dir() {
            return DiskState::Unknown(format!(
                "the workspace root {} is not readable here",
                root.display()
            ));
        }
        root.join(&path.relative)
    };
    match std::fs::metadata(&file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return DiskState::Deleted,
        Err(e) => {
            return DiskState::Unknown(format!("cannot inspect {}: {e}", file.display()));
        }
        Ok(meta) if !meta.is_file() => {
            return DiskState::Unknown(format!("{} is not a regular file", file.display()));
        }
        Ok(_) => {}
    }
    match file_content_hash(&file) {
        Ok(Some(now)) if &now == recorded => DiskState::Unchanged,
        Ok(Some(_)) => DiskState::Changed,
        Ok(None) => DiskState::Unknown(format!(
            "{} is too large to hash; read it if you need it",
            file.display()
        )),
        Err(e) => DiskState::Unknown(format!("cannot read {}: {}", file.display(), e.message())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::PathAccess;

    fn path(relative: &str, hash: Option<String>) -> StoredPath {
        StoredPath {
            given: relative.into(),
            relative: relative.into(),
            access: PathAccess::Read,
            content_hash: hash,
        }
    }

    #[test]
    fn a_recorded_window_is_exact() {
        use serde_json::json;
        let input = json!({"file_path": "a.rs", "offset": 120, "limit": 50});
        let window = json!({"file": {"startLine": 120, "numLines": 50, "totalLines": 1204}});
        assert_eq!(
            read_part(&input, Some(&window), None),
            Some(ReadPart::Lines {
                first: 120,
                last: 169,
                total: 1204
            })
        );
        // The recorded read covered the whole file although it had range arguments.
        let all = json!({"file": {"startLine": 1, "numLines": 90, "totalLines": 90}});
        assert_eq!(read_part(&input, Some(&all), None), None);
        let absurd = json!({"file": {"startLine": u64::MAX, "numLines": 9, "totalLines": 9}});
        assert!(matches!(
            read_part(&input, Some(&absurd), None),
            Some(ReadPart::Lines { last: u64::MAX, .. })
        ));
        // Cut at the harness's default length without any argument.
        let cut = json!({"file": {"startLine": 1, "numLines": 2000, "totalLines": 5000}});
        assert_eq!(
            read_part(&json!({"file_path": "a.rs"}), Some(&cut), None),
            Some(ReadPart::Lines {
                first: 1,
                last: 2000,
                total: 5000
            })
        );
    }

    #[test]
    fn range_arguments_are_shown_as_given_unless_they_ask_for_everything() {
        use serde_json::json;
        let shown = |input: Value| read_part(&input, None, None).map(|p| p.to_string());
        assert_eq!(
            shown(json!({"file_path": "a.rs", "offset": 120, "limit": 50})).as_deref(),
            Some(
                "this read was called with range arguments (offset: 120, limit: 50) and may \
                 hold only part of the file"
            )
        );
        assert!(
            shown(json!({"command": "view", "path": "a.rs", "view_range": [10, 40]}))
                .is_some_and(|s| s.contains("(view_range: [10,40])"))
        );
        assert!(
            shown(json!({"offset": 1, "limit": 400})).is_some(),
            "limit may cut"
        );
        assert!(
            shown(json!({"file_path": "spec.pdf", "pages": "1-5"}))
                .is_some_and(|s| s.contains("(pages: \"1-5\")"))
        );
        for whole in [
            json!({"file_path": "a.rs"}),
            json!({"file_path": "a.rs", "limit": null}),
            json!({"file_path": "a.rs", "offset": 0}),
            json!({"file_path": "a.rs", "offset": 1}),
            json!({"path": "a.rs", "view_range": [1, -1]}),
            json!({"path": "a.rs", "start_line": 1}),
            json!("a.rs"),
        ] {
            assert_eq!(shown(whole.clone()), None, "{whole}");
        }
    }

    #[test]
    fn shell_reads_are_whole_unless_the_command_can_cut() {
        use serde_json::json;
        let part = |command: Value| read_part(&json!({ "command": command }), None, None);
        assert_eq!(part(json!("cat src/b.py")), None);
        assert_eq!(part(json!("nl -ba src/b.py")), None);
        assert_eq!(part(json!(["bash", "-lc", "cat src/b.py"])), None);
        assert_eq!(
            part(json!("sed -n '1,200p' src/b.py"))
                .map(|p| p.to_string())
                .as_deref(),
            Some(
                "this read was the shell command `sed -n '1,200p' src/b.py`, which may show \
                 only part of the file"
            )
        );
        assert!(matches!(
            part(json!("head -n 5 a.rs")),
            Some(ReadPart::Command(_))
        ));
        assert!(matches!(
            part(json!("cat a.rs | tail")),
            Some(ReadPart::Command(_))
        ));
        // Of a command reading several files, the one asked about decides.
        let both = json!({"command": "cat src/a.py && head -3 b.py"});
        assert_eq!(read_part(&both, None, Some("src/a.py")), None);
        assert!(matches!(
            read_part(&both, None, Some("b.py")),
            Some(ReadPart::Command(_))
        ));
        assert!(read_part(&both, None, None).is_some(), "either file");
        assert!(read_part(&both, None, Some("c.py")).is_some(), "not named");
        // The text editor's `command` is no shell: its range arguments decide.
        let view = json!({"command": "view", "path": "a.rs", "view_range": [3, 9]});
        assert!(matches!(
            read_part(&view, None, None),
            Some(ReadPart::Arguments(_))
        ));
    }

    #[test]
    fn states_follow_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "one").unwrap();
        let hash = file_content_hash(&file).unwrap();
        assert_eq!(
            disk_state(dir.path(), &path("a.txt", hash.clone())),
            DiskState::Unchanged
        );
        std::fs::write(&file, "two").unwrap();
        assert_eq!(
            disk_state(dir.path(), &path("a.txt", hash.clone())),
            DiskState::Changed
        );
        let absolute = file.to_string_lossy().into_owned();
        assert_eq!(
            disk_state(
                Path::new("/nonexistent-root"),
                &path(&absolute, hash.clone())
            ),
            DiskState::Changed
        );
        std::fs::remove_file(&file).unwrap();
        assert_eq!(
            disk_state(dir.path(), &path("a.txt", hash.clone())),
            DiskState::Deleted
        );
        assert!(matches!(
            disk_state(dir.path(), &path("a.txt", None)),
            DiskState::Unknown(reason) if reason.contains("no content hash")
        ));
        assert!(matches!(
            disk_state(Path::new("/nonexistent-root"), &path("a.txt", hash)),
            DiskState::Unknown(reason) if reason.contains("not readable")
        ));
    }
}
