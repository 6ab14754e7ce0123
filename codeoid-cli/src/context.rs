//! What every command needs: the store path and the workspace, resolved from `--db`,
//! `--workspace`, the environment and the current directory, opened lazily.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use codeoid_core::retrieve::ModelChoice;
use codeoid_core::store::{Store, Workspace, default_path};
use codeoid_core::{ErrorKind, Memory, MemoryConfig};

/// Global options, resolved on demand.
pub struct Context {
    db: Option<PathBuf>,
    workspace: Option<String>,
    creates_store: bool,
}

impl Context {
    /// `creates_store` is whether the command may create a store that does not exist yet (one
    /// that records); a command that only reads refuses a missing store instead of leaving an
    /// empty one, and its folders, behind a mistyped `--db`.
    pub fn new(db: Option<PathBuf>, workspace: Option<String>, creates_store: bool) -> Context {
        Context {
            db,
            workspace,
            creates_store,
        }
    }

    /// The global options given on this command line, as later commands need them: the Claude
    /// Code hook writes `codeoid run` commands (and `claude-code-settings` a hook command) that
    /// must use the same store and workspace. Paths are made absolute, since those commands
    /// run in other directories.
    pub fn global_args(&self) -> Result<Vec<String>> {
        let mut args = self.db_args()?;
        if let Some(workspace) = &self.workspace {
            let as_given = std::path::Path::new(workspace);
            let value = if workspace.starts_with("ws_") && !as_given.exists() {
                workspace.clone()
            } else {
                absolute(as_given)?
            };
            args.extend(["--workspace".to_owned(), value]);
        }
        Ok(args)
    }

    /// `--db` and the store's absolute path when `--db` chose it (the first of
    /// [`Context::global_args`]), else nothing.
    pub fn db_args(&self) -> Result<Vec<String>> {
        match &self.db {
            Some(db) => Ok(vec!["--db".to_owned(), absolute(db)?]),
            None => Ok(Vec::new()),
        }
    }

    /// The store file this invocation uses.
    pub fn db_path(&self) -> Result<PathBuf> {
        match &self.db {
            Some(path) => Ok(path.clone()),
            None => Ok(default_path()?),
        }
    }

    /// Opens the store, creating it and its directory when needed and the command records.
    pub fn store(&self) -> Result<Arc<Store>> {
        let path = self.db_path()?;
        if path.is_dir() {
            anyhow::bail!(
                "{} is a directory; the store is a file (such as {})",
                path.display(),
                path.join("codeoid.db").display()
            );
        }
        if path
            .as_os_str()
            .as_encoded_bytes()
            .last()
            .is_some_and(|&b| std::path::is_separator(b as char))
        {
            anyhow::bail!(
                "{} ends with '/', which names a directory; the store is a file (such as {})",
                path.display(),
                path.join("codeoid.db").display()
            );
        }
        match std::fs::metadata(&path) {
            Ok(found) if !found.is_file() => anyhow::bail!(
                "{} is not a regular file (a pipe, a device or a socket); the store is a file \
                 (check --db and CODEOID_DB)",
                path.display()
            ),
            // An empty file would become a store: a command that only reads leaves it as it is.
            Ok(found) if found.len() == 0 && !self.creates_store => anyhow::bail!(
                "{} is empty: nothing was imported or recorded there yet; `codeoid import \
                 <logs>` or `codeoid quickstart` fills it (check --db and CODEOID_DB)",
                path.display()
            ),
            Err(_) if !self.creates_store => anyhow::bail!(
                "no store at {}: nothing was imported or recorded there yet; `codeoid import \
                 <logs>` or `codeoid quickstart` fills one (check --db and CODEOID_DB)",
                path.display()
            ),
            _ => {}
        }
        match Store::open(&path) {
            Ok(store) => Ok(Arc::new(store)),
            // A command that only reads can read a store it may not write (read-only media or
            // mount, another user's file) without writing anything to it.
            Err(e) if !self.creates_store && e.kind() == ErrorKind::Io => {
                Ok(Arc::new(Store::open_read_only(&path)?))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// A memory bound to the selected workspace (a directory, a `ws_…` id, or the current
    /// directory), with the configuration of the environment but no embedding worker: a
    /// command that only records or reads exits long before a model could load (or download),
    /// and whatever it records is embedded by the next command that recalls.
    pub fn memory(&self) -> Result<Memory> {
        let mut config = MemoryConfig::from_env()?;
        config.embedding.model = ModelChoice::Disabled;
        self.memory_with(config)
    }

    /// [`Context::memory`] with embeddings as the environment configures them, for the
    /// commands that recall.
    pub fn memory_for_recall(&self) -> Result<Memory> {
        self.memory_with(MemoryConfig::from_env()?)
    }

    /// [`Context::memory`] for recording into session `id`: bound to the workspace that session
    /// is stored in when it exists and no `--workspace` was given. A harness session started in
    /// one checkout goes on recording there when its agent runs a command from another
    /// directory (`cd ../other && codeoid run …`).
    pub fn memory_for_session(&self, id: &str) -> Result<Memory> {
        let mut config = MemoryConfig::from_env()?;
        config.embedding.model = ModelChoice::Disabled;
        if self.workspace.is_none() {
            let store = self.store()?;
            if let Some(workspace) = store.session_workspace(id, &config.tenant)? {
                return Ok(Memory::for_workspace(store, workspace, config)?);
            }
        }
        self.memory_with(config)
    }

    fn memory_with(&self, config: MemoryConfig) -> Result<Memory> {
        let store = self.store()?;
        let workspace = match self.workspace.as_deref() {
            Some(id) if id.starts_with("ws_") && !std::path::Path::new(id).exists() => {
                let record = store.workspace_record(id)?.with_context(|| {
                    format!("workspace {id} is not in the store; `codeoid stats` lists them")
                })?;
                record.at_root(&record.root)
            }
            Some(dir) => Workspace::resolve_for_tenant(dir, &config.tenant)?,
            None => Workspace::resolve_for_tenant(std::env::current_dir()?, &config.tenant)?,
        };
        Ok(Memory::for_workspace(store, workspace, config)?)
    }
}

/// An error with its whole cause chain: what the command was doing (its contexts), then a
/// codeoid error's own message with its hint and SQLite's or the system's cause.
pub fn describe(err: &anyhow::Error) -> String {
    let mut parts = Vec::new();
    for cause in err.chain() {
        if let Some(core) = cause.downcast_ref::<codeoid_core::Error>() {
            parts.push(core.full_message());
            return parts.join(": ");
        }
        parts.push(cause.to_string());
    }
    format!("{err:#}")
}

/// `true` when the error is a write to a closed pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// `path` as an absolute path (relative to the current directory), as text for a command line.
fn absolute(path: &std::path::Path) -> Result<String> {
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    Ok(path.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_keeps_what_the_command_was_doing_and_the_core_error_whole() {
        let failed: Result<()> = Err(codeoid_core::Error::invalid_input("bad turn").into());
        let err = failed.context("cannot import log.jsonl").unwrap_err();
        assert_eq!(describe(&err), "cannot import log.jsonl: bad turn");
        let plain = anyhow::anyhow!("no core error").context("outer");
        assert_eq!(describe(&plain), "outer: no core error");
    }
}
