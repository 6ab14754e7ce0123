//! Workspace identity: which memory a directory belongs to, and paths relative to it (DESIGN §1).
//!
//! `workspace_id = "ws_" + first 16 hex of sha256(tenant + "\0" + key)`, where the key is the
//! repository's git common dir (shared by every worktree of a repository) or, outside git, the
//! normalized directory. The root is the worktree's top-level directory (or that directory): file
//! paths in episodes are stored relative to the root of the session that touched them, so
//! `src/lib.rs` means the same file in every worktree.
//!
//! The git common dir is found by reading `.git` directories and `gitdir:` files (and the
//! `commondir` file of linked worktrees) directly, without running git. A `.git` file that cannot
//! be understood is treated as "not a repository" so a broken checkout still gets memory.
//!
//! It deliberately does not touch the store: [`Workspace`] is a pure value that the store
//! registers when a session is created.

use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::canonical::episode::hex_prefix;
use crate::error::{Error, Result};

/// Where a workspace's identity came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkspaceSource {
    /// The git common dir of the repository containing the directory.
    Git,
    /// The normalized directory itself (not inside a git repository).
    Directory,
}

/// A resolved workspace: its id, tenant, identity key and the root of the directory's checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    id: String,
    tenant: String,
    key: String,
    root: PathBuf,
    source: WorkspaceSource,
}

impl Workspace {
    /// The workspace of `dir` for the default tenant `""`.
    ///
    /// # Errors
    /// See [`Workspace::resolve_for_tenant`].
    pub fn resolve(dir: impl AsRef<Path>) -> Result<Workspace> {
        Workspace::resolve_for_tenant(dir, "")
    }

    /// The workspace of `dir` for `tenant`. `dir` need not exist (a log imported from another
    /// machine names directories that are not here): then it is normalized lexically and used
    /// as its own identity.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Io`] when `dir` is relative and the current directory is unknown, or
    /// when an existing `.git` entry cannot be read.
    pub fn resolve_for_tenant(dir: impl AsRef<Path>, tenant: &str) -> Result<Workspace> {
        let dir = dir.as_ref();
        let absolute = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            let cwd = std::env::current_dir()
                .map_err(|e| Error::io("resolve the current directory for", dir, e))?;
            cwd.join(dir)
        };
        let normalized = std::fs::canonicalize(&absolute).unwrap_or_else(|_| lexical(&absolute));
        if let Some((root, common)) = find_git(&normalized)? {
            return Ok(Workspace::from_parts(
                tenant,
                &path_key(&common),
                root,
                WorkspaceSource::Git,
            ));
        }
        Ok(Workspace::from_parts(
            tenant,
            &path_key(&normalized),
            normalized,
            WorkspaceSource::Directory,
        ))
    }

    /// A workspace from already-known parts: `key` is the identity (git common dir or
    /// directory), `root` the checkout root used for relative paths.
    pub fn from_parts(
        tenant: &str,
        key: &str,
        root: impl Into<PathBuf>,
        source: WorkspaceSource,
    ) -> Workspace {
        Workspace {
            id: workspace_id(tenant, key),
            tenant: tenant.to_owned(),
            key: key.to_owned(),
            root: root.into(),
            source,
        }
    }

    /// `ws_` + 16 hex digits.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The tenant (`""` by default).
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// The identity key: the git common dir or the normalized directory.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The checkout root that episode paths are made relative to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the identity came from git or from the directory.
    pub fn source(&self) -> WorkspaceSource {
        self.source
    }

    /// `path` normalized relative to this workspace's root; see [`relative_path`].
    pub fn relativize(&self, path: &str) -> String {
        relative_path(&self.root, path)
    }
}

/// `"ws_"` + the first 16 hex digits of `sha256(tenant + "\0" + key)`.
pub fn workspace_id(tenant: &str, key: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(tenant.as_bytes());
    hasher.update([0u8]);
    hasher.update(key.as_bytes());
    format!("ws_{}", hex_prefix(&hasher.finalize(), 8))
}

/// `path` normalized (`.` and `..` resolved lexically, `/` separators) and, when it lies under
/// `root`, made relative to it. Relative paths are taken as relative to `root` already. Paths
/// outside the root stay absolute, so nothing is silently mapped onto the wrong file.
pub fn relative_path(root: &Path, path: &str) -> String {
    let given = Path::new(path);
    let normalized = lexical(given);
    if given.is_absolute() {
        let root = lexical(root);
        if let Ok(rest) = normalized.strip_prefix(&root) {
            return slash_string(rest);
        }
    }
    slash_string(&normalized)
}

fn slash_string(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::RootDir => Some(String::new()),
            Component::Prefix(p) => Some(p.as_os_str().to_string_lossy().into_owned()),
            Component::CurDir => None,
            Component::ParentDir => Some("..".to_owned()),
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
        })
        .collect();
    match parts.as_slice() {
        [] => ".".to_owned(),
        [only] if only.is_empty() => "/".to_owned(),
        _ => parts.join("/"),
    }
}

/// Resolves `.` and `..` without touching the filesystem. A `..` at the start of a relative path
/// is kept; at the root it is dropped.
fn lexical(path: &Path) -> PathBuf {
    let mut out: Vec<Component<'_>> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(component),
            },
            other => out.push(other),
        }
    }
    out.iter().collect()
}

fn path_key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Walks up from `dir` to the first `.git`; returns (worktree root, git common dir).
fn find_git(dir: &Path) -> Result<Option<(PathBuf, PathBuf)>> {
    for candidate in dir.ancestors() {
        let dot_git = candidate.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            let common = common_dir_of(&dot_git)?;
            return Ok(Some((candidate.to_path_buf(), common)));
        }
        let text = std::fs::read_to_string(&dot_git)
            .map_err(|e| Error::io("read the git link file", &dot_git, e))?;
        let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
            // Not a git link file: treat the directory as not a repository.
            return Ok(None);
        };
        let gitdir = candidate.join(target.trim());
        let common = common_dir_of(&gitdir)?;
        return Ok(Some((candidate.to_path_buf(), common)));
    }
    Ok(None)
}

/// A git dir's common dir: itself, or what its `commondir` file names (linked worktrees).
fn common_dir_of(gitdir: &Path) -> Result<PathBuf> {
    let commondir_file = gitdir.join("commondir");
    let common = match std::fs::read_to_string(&commondir_file) {
        Ok(text) => gitdir.join(text.trim()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => gitdir.to_path_buf(),
        Err(e) => return Err(Error::io("read", &commondir_file, e)),
    };
    Ok(std::fs::canonicalize(&common).unwrap_or_else(|_| lexical(&common)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_depend_on_tenant_and_key() {
        let a = workspace_id("", "/repo/.git");
        assert!(a.starts_with("ws_") && a.len() == 19, "{a}");
        assert_eq!(a, workspace_id("", "/repo/.git"));
        assert_ne!(a, workspace_id("acme", "/repo/.git"));
        assert_ne!(a, workspace_id("", "/other/.git"));
        // The separator keeps ("a", "b/c") and ("a\0b", "c")-style splits apart.
        assert_ne!(workspace_id("a", "bc"), workspace_id("ab", "c"));
    }

    #[test]
    fn paths_are_normalized_and_made_relative() {
        let root = Path::new("/work/repo");
        assert_eq!(relative_path(root, "/work/repo/src/lib.rs"), "src/lib.rs");
        assert_eq!(
            relative_path(root, "/work/repo/./src/../src/lib.rs"),
            "src/lib.rs"
        );
        assert_eq!(relative_path(root, "./src/lib.rs"), "src/lib.rs");
        assert_eq!(relative_path(root, "src//lib.rs"), "src/lib.rs");
        assert_eq!(relative_path(root, "/etc/hosts"), "/etc/hosts");
        assert_eq!(
            relative_path(root, "/work/repository/x"),
            "/work/repository/x"
        );
        assert_eq!(relative_path(root, "../x"), "../x");
        assert_eq!(relative_path(root, "/work/repo"), ".");
        assert_eq!(relative_path(root, "**/*.rs"), "**/*.rs");
        assert_eq!(relative_path(root, "/"), "/");
    }

    #[test]
    fn a_missing_directory_is_its_own_identity() {
        let ws = Workspace::resolve("/nonexistent/codeoid/./a/../b").unwrap();
        assert_eq!(ws.source(), WorkspaceSource::Directory);
        assert_eq!(ws.root(), Path::new("/nonexistent/codeoid/b"));
        assert_eq!(ws.id(), workspace_id("", "/nonexistent/codeoid/b"));
        assert_eq!(ws.relativize("/nonexistent/codeoid/b/x.rs"), "x.rs");
    }
}
