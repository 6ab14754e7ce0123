//! Import and fork through a [`Memory`]: the store-level operations of `crate::import` and
//! `crate::fork`, scoped to the memory's workspace where a model could reach the result.

use std::path::Path;

use super::Memory;
use crate::error::Result;
use crate::fork::{ForkOptions, Forked, fork_with};
use crate::import::{ImportOptions, ImportSummary, Progress, import_into_while};
use crate::translate::Backend;

impl Memory {
    /// Imports session logs (a file or a folder: Claude Code, Codex CLI, Gemini CLI, SWE-agent;
    /// the format is detected) into the store. Each session goes to the workspace its log names;
    /// logs that name none go to this memory's workspace unless `options.fallback_dir` says
    /// otherwise. Re-importing adds nothing; a log that grew is brought up to date exactly.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] / [`crate::ErrorKind::Io`] for an unreadable path,
    /// [`crate::ErrorKind::Import`] for a single file in no known format; malformed lines are
    /// skipped and reported in the summary instead.
    pub fn import_logs(
        &self,
        path: &Path,
        options: &ImportOptions,
        on_progress: &mut dyn FnMut(&Progress<'_>),
    ) -> Result<ImportSummary> {
        self.import_logs_while(path, options, on_progress, &mut || true)
    }

    /// [`Memory::import_logs`], asking `keep_going` before each file; when it answers `false`
    /// the import ends there with [`ImportSummary::stopped`] set (see
    /// [`crate::import::import_into_while`]).
    ///
    /// # Errors
    /// As [`Memory::import_logs`].
    pub fn import_logs_while(
        &self,
        path: &Path,
        options: &ImportOptions,
        on_progress: &mut dyn FnMut(&Progress<'_>),
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<ImportSummary> {
        let mut options = options.clone();
        if options.fallback_dir.is_none() && options.workspace_dir.is_none() {
            options.fallback_dir = Some(self.workspace.root().to_path_buf());
        }
        if options.tenant.is_empty() {
            options.tenant = self.config.tenant.clone();
        }
        import_into_while(&self.store, path, &options, on_progress, keep_going)
    }

    /// Forks session `session_id` of this workspace at `at_turn` (the last turn to copy; the tip
    /// when `None`) into a new session `name`, optionally for another backend: see
    /// [`crate::fork`]. The parent is untouched; its episodes stay visible to the fork as a prior
    /// session.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when the session is not in this workspace, and everything
    /// [`crate::fork::fork_with`] reports (blank name, `at_turn` out of range, a strict lossy
    /// translation...). Nothing is written on error.
    pub fn fork(
        &self,
        session_id: &str,
        at_turn: Option<u64>,
        target: Option<&Backend>,
        name: &str,
        options: &ForkOptions,
    ) -> Result<Forked> {
        self.session(session_id)?;
        fork_with(&self.store, session_id, at_turn, target, name, options)
    }
}
