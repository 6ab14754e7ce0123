//! Which directory a Gemini CLI chat belongs to. A chat names no working directory, only
//! `projectHash`: the hex sha256 of the project root's path, as Gemini CLI computes it
//! (`getProjectHash(projectRoot)`, the path string hashed as it is); a subagent's chat also
//! lists its workspace `directories`. The root is the candidate, or an ancestor of one, whose
//! path hashes to `projectHash`.
//!
//! [`project_root`] is pure path arithmetic over the candidates it is given; [`root_here`] tries
//! the directories of this machine an import can offer (the fallback directory and the current
//! one, as given and with symbolic links resolved).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The lowercase hex sha256 of `path`'s text, as Gemini CLI hashes a project root.
fn hash_of(path: &Path) -> Option<String> {
    let text = path.to_str()?;
    let digest = Sha256::digest(text.as_bytes());
    Some(digest.iter().map(|b| format!("{b:02x}")).collect())
}

/// The first of `candidates`, or of their ancestors (each candidate before its parents), whose
/// path hashes to `project_hash`.
pub(crate) fn project_root<'a>(
    project_hash: &str,
    candidates: impl IntoIterator<Item = &'a Path>,
) -> Option<PathBuf> {
    let want = project_hash.trim().to_ascii_lowercase();
    if want.len() != 64 {
        return None;
    }
    candidates
        .into_iter()
        .flat_map(Path::ancestors)
        .find(|dir| !dir.as_os_str().is_empty() && hash_of(dir).as_deref() == Some(want.as_str()))
        .map(Path::to_path_buf)
}

/// The directory of this machine whose path Gemini CLI hashed to `project_hash`: `fallback_dir`,
/// the current directory, or a folder above either.
pub(crate) fn root_here(project_hash: &str, fallback_dir: Option<&Path>) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    let here = std::env::current_dir().ok();
    for dir in fallback_dir.map(Path::to_path_buf).into_iter().chain(here) {
        if let Ok(dir) = std::path::absolute(&dir) {
            candidates.extend(dir.canonicalize().ok());
            candidates.push(dir);
        }
    }
    project_root(project_hash, candidates.iter().map(PathBuf::as_path))
}

/// The warning for a chat of session `session_id` that no directory here matched, put in
/// `fallback_dir`'s workspace.
pub(crate) fn unmatched_root(session_id: &str, project_hash: &str, fallback_dir: &Path) -> String {
    format!(
        "the Gemini CLI chat {session_id:?} names its project only by the sha256 of its path, \
         {project_hash}, and no directory here hashes to it ({}, the current directory and the \
         folders above them do not); it was put in the fallback directory's workspace, which \
         may not be its project: import it again with its project as the fallback directory",
        fallback_dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_directory_whose_path_hashes_to_the_project_hash() {
        // printf %s /tmp/imp-review/projB | sha256sum
        let hash = "fa78a3a022c0665c95cc4f2be93ed2813c246ef6ca0560a3b6db9635ef7cac10";
        let deep = Path::new("/tmp/imp-review/projB/src/lib");
        assert_eq!(
            project_root(hash, [Path::new("/elsewhere"), deep]),
            Some(PathBuf::from("/tmp/imp-review/projB"))
        );
        assert_eq!(project_root(hash, [Path::new("/tmp/imp-review")]), None);
        assert_eq!(project_root("not-a-hash", [deep]), None);
        assert!(project_root(&hash.to_uppercase(), [deep]).is_some());
    }
}
