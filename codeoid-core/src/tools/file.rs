//! `recall_file`'s answer: the most recent read of a file and whether the file on disk is still
//! what was read, by content hash.
//!
//! The hash of a read is recorded when a live session records it (see
//! `MemoryConfig::hash_live_reads`); imported reads have none, and then the answer is "unknown",
//! never a guess. The comparison reads the file under the workspace root (or the absolute path
//! the read named) as it is now.

use std::path::{Path, PathBuf};

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
    /// When the read asked for part of the file, the arguments that said which part, as the
    /// tool was called with them (`offset: 120, limit: 50`; see [`read_range`]).
    pub part: Option<String>,
}

/// Arguments of a file read that select part of the file, in the order they are shown: Claude
/// Code's and Gemini CLI's `offset`/`limit`, the Anthropic text editor's `view_range`, and the
/// `start_line`/`end_line` some harnesses use.
const RANGE_KEYS: [&str; 5] = ["offset", "limit", "view_range", "start_line", "end_line"];

/// The range arguments of a read's `input` (`offset: 120, limit: 50`), or `None` when the read
/// asked for the whole file.
pub fn read_range(input: &serde_json::Value) -> Option<String> {
    let given: Vec<String> = RANGE_KEYS
        .iter()
        .filter_map(|key| match input.get(key) {
            None | Some(serde_json::Value::Null) => None,
            Some(value) => Some(format!("{key}: {value}")),
        })
        .collect();
    (!given.is_empty()).then(|| given.join(", "))
}

/// Compares the file `path` names (relative to `root` unless absolute) with the hash recorded
/// at the read.
pub fn disk_state(root: &Path, path: &StoredPath) -> DiskState {
    let Some(recorded) = &path.content_hash else {
        return DiskState::Unknown(
            "no content hash was recorded for that read; imported sessions have none".to_owned(),
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
    fn range_arguments_are_shown_as_given() {
        use serde_json::json;
        assert_eq!(
            read_range(&json!({"file_path": "a.rs", "offset": 120, "limit": 50})).as_deref(),
            Some("offset: 120, limit: 50")
        );
        assert_eq!(
            read_range(&json!({"command": "view", "path": "a.rs", "view_range": [10, 40]}))
                .as_deref(),
            Some("view_range: [10,40]")
        );
        assert_eq!(read_range(&json!({"file_path": "a.rs"})), None);
        assert_eq!(
            read_range(&json!({"file_path": "a.rs", "limit": null})),
            None
        );
        assert_eq!(read_range(&json!("a.rs")), None);
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
