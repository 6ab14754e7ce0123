//! Importing session logs into the store: the readers' sessions, each in its workspace, recorded
//! so that importing again, or importing a log that has grown since, leaves the store exactly as
//! one import of the final log would.
//!
//! For each session [`super::visit_path`] hands over:
//! - **Workspace.** [`ImportOptions::workspace_dir`] when given (everything into one checkout's
//!   memory). Otherwise the log's recorded `cwd`: resolved through git when it exists here, so
//!   all worktrees of a repository share memory; when it does not (a log from another machine)
//!   the recorded path itself is the identity (see [`Workspace::resolve_for_tenant`]), stable
//!   across machines and re-imports and keeping projects apart. A subagent whose parent was read
//!   in the same import, or is already stored, joins the parent's workspace whatever directory
//!   its own log starts in (one stored before its parent stays where it was stored);
//!   a Gemini CLI chat, which names only the sha256 of its project's path, goes to the fallback
//!   directory, the current directory or a folder above either whose path has that hash; other
//!   sessions without a cwd use [`ImportOptions::fallback_dir`] (a Gemini chat whose hash
//!   matched nothing too, with a warning naming the hash), or are skipped and reported when
//!   there is none.
//! - **Session.** Created with the log's id, title, provider, model and start time (idempotent);
//!   subagents get lineage kind `Subagent` with the parent and, when the log links them, the
//!   parent's turn holding the call that started them. Title, provider and model follow the log
//!   on re-import. Sessions without turns are not stored.
//! - **Turns.** [`Store::sync_turns`] in batches of [`ImportOptions::batch_turns`]: unchanged
//!   turns are compared and skipped, a changed tail (a response that was still being written) is
//!   replaced, new turns are appended.
//! - **Finish.** A session whose last turn is at least [`ImportOptions::finish_after`] old is
//!   finished (pending calls become `cancelled`, the final answer is stored); a younger one is a
//!   log still being written and stays open, so a running call is not shown as cancelled. Either
//!   way nothing is permanent: when a later import finds more turns, the finish is undone first
//!   and a late result pairs with its call.
//! - **An older copy.** A Claude Code or Codex log only grows, so one with fewer turns than the
//!   stored session is an older copy (a backup, say): it is skipped and reported. Synced, a
//!   last turn it holds cut short would count as a change, and everything stored after it
//!   would be replaced by nothing.
//! - **Another log under a known id.** A growing log keeps its first turn. A log whose first
//!   turn differs from the stored session's, or a second file claiming a session id already
//!   imported in this run (a resumed session that kept its id), is another conversation: it is
//!   skipped and reported rather than allowed to replace the stored one.
//!
//! It deliberately reads no log itself (the format readers do) and chooses no workspace beyond
//! the rules above.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::Utc;
use serde::Serialize;

use super::gemini_cli::{root_here, unmatched_root};
use super::report::{At, ImportReport, Progress, lossy_path};
use super::session::{ImportedSession, LogFormat, SessionKind};
use super::walk::visit_path_while;
use crate::canonical::Part;
use crate::error::{Error, ErrorKind, Result};
use crate::store::{
    Lineage, LineageKind, NewSession, SessionUpdate, Store, Synced, Workspace, WorkspaceSource,
};

/// Default [`ImportOptions::finish_after`]: ten minutes, the longest a Claude Code shell command
/// may run, so a session idle for longer is not waiting for a tool.
pub const DEFAULT_FINISH_AFTER: Duration = Duration::from_secs(10 * 60);

/// Default [`ImportOptions::batch_turns`]: small enough that one transaction never holds the
/// write lock for long, large enough that commits do not dominate.
pub const DEFAULT_BATCH_TURNS: usize = 256;

/// How to import. `Default` is the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// Tenant of every workspace (part of the workspace id; `""` by default).
    pub tenant: String,
    /// Put every session in this directory's workspace instead of the one its log names.
    pub workspace_dir: Option<PathBuf>,
    /// Workspace directory for sessions whose log names no working directory (Gemini CLI,
    /// SWE-agent) and that have no parent to follow.
    pub fallback_dir: Option<PathBuf>,
    /// Finish sessions whose last turn is at least this old; `None` never finishes,
    /// `Some(Duration::ZERO)` finishes every session. Sessions without timestamps count as old.
    pub finish_after: Option<Duration>,
    /// Turns per transaction (at least 1).
    pub batch_turns: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            tenant: String::new(),
            workspace_dir: None,
            fallback_dir: None,
            finish_after: Some(DEFAULT_FINISH_AFTER),
            batch_turns: DEFAULT_BATCH_TURNS,
        }
    }
}

/// A session read from a log but not stored, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedSession {
    /// The session id from the log.
    pub session_id: String,
    /// The file it came from.
    #[serde(serialize_with = "lossy_path")]
    pub source_path: PathBuf,
    /// Why it was not stored.
    pub reason: String,
}

/// What [`import_into`] did: the readers' report plus what changed in the store.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportSummary {
    /// What was read, merged, ignored and skipped (malformed lines included).
    pub report: ImportReport,
    /// Sessions created by this import.
    pub sessions_new: u64,
    /// Sessions that existed and gained, lost or replaced turns or episodes, or were finished.
    pub sessions_updated: u64,
    /// Sessions that existed and were already up to date.
    pub sessions_unchanged: u64,
    /// Sessions read with no turns; not stored.
    pub sessions_empty: u64,
    /// Sessions not stored because of a problem with that session alone (listed below).
    pub sessions_skipped: u64,
    /// The first [`super::MAX_LISTED_ISSUES`] of them.
    pub skipped_sessions: Vec<SkippedSession>,
    /// Sessions this import finished.
    pub sessions_finished: u64,
    /// Turns written (new turns and new versions of changed ones).
    pub turns_added: u64,
    /// Turns that were already stored exactly so.
    pub turns_unchanged: u64,
    /// Stored turns replaced because the log changed them.
    pub turns_replaced: u64,
    /// Episodes written.
    pub episodes_added: u64,
    /// Episodes removed with replaced turns or an undone finish.
    pub episodes_removed: u64,
    /// The caller stopped the import ([`import_into_while`]) before every file was read:
    /// what is counted here is stored, and importing again goes on from there. Serialized
    /// only when set.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
}

impl ImportSummary {
    fn skip(&mut self, session: &ImportedSession, reason: String) {
        self.sessions_skipped += 1;
        if self.skipped_sessions.len() < super::MAX_LISTED_ISSUES {
            self.skipped_sessions.push(SkippedSession {
                session_id: session.session_id.clone(),
                source_path: session.source_path.clone(),
                reason,
            });
        }
    }

    fn add(&mut self, synced: &Synced) {
        self.turns_added += synced.added;
        self.turns_unchanged += synced.unchanged;
        self.turns_replaced += synced.removed;
        self.episodes_added += synced.episode_ids.len() as u64;
        self.episodes_removed += synced.episodes_removed;
        if synced.finished {
            self.sessions_finished += 1;
        }
    }
}

/// What a subagent needs from its parent, kept for the main sessions of this import.
struct Parent {
    workspace: Workspace,
    title: Option<String>,
    /// Tool call id → index of the turn that holds it (= its sequence number).
    calls: HashMap<String, u64>,
}

/// The state of one import run.
struct Importer<'a> {
    store: &'a Store,
    options: &'a ImportOptions,
    summary: ImportSummary,
    workspaces: HashMap<PathBuf, Workspace>,
    parents: HashMap<String, Parent>,
    /// Session id → the file it was imported from in this run.
    seen: HashMap<String, PathBuf>,
    /// Warnings about where sessions were put, for the report: (file, reason).
    warnings: Vec<(PathBuf, String)>,
}

/// Imports the session log at `path`, or every log under the folder `path`, into `store`; see
/// the module documentation. `on_progress` is called before the first file and after each one.
///
/// # Errors
/// - [`ErrorKind::InvalidInput`] when `options.batch_turns` is 0; [`ErrorKind::NotFound`] when
///   `options.workspace_dir` is not a directory (a relative one is taken from the current
///   directory).
/// - What [`super::visit_path`] returns for the path ([`ErrorKind::NotFound`],
///   [`ErrorKind::Io`], [`ErrorKind::Import`] for a single file that is not a session log).
/// - Store failures ([`ErrorKind::Database`], [`ErrorKind::Busy`]...): the import stops; every
///   batch committed before stays, and importing again resumes where it stopped. Problems of
///   one session alone (an id that belongs to another workspace, no workspace to put it in)
///   skip that session and are listed in [`ImportSummary::skipped_sessions`].
pub fn import_into(
    store: &Store,
    path: &Path,
    options: &ImportOptions,
    on_progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<ImportSummary> {
    import_into_while(store, path, options, on_progress, &mut || true)
}

/// [`import_into`], asking `keep_going` before each file: when it answers `false` (the person
/// pressed Ctrl-C, say) the import ends there with [`ImportSummary::stopped`] set. Every file
/// read before is stored whole; importing again goes on from there.
///
/// # Errors
/// As [`import_into`].
pub fn import_into_while(
    store: &Store,
    path: &Path,
    options: &ImportOptions,
    on_progress: &mut dyn FnMut(&Progress<'_>),
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<ImportSummary> {
    if options.batch_turns == 0 {
        return Err(Error::invalid_input(
            "batch_turns is 0; use at least 1 turn per transaction",
        ));
    }
    // `workspace_dir` is a directory of this machine: relative to the current one, and there.
    let options = &match &options.workspace_dir {
        Some(dir) => {
            let dir = std::path::absolute(dir)
                .map_err(|e| Error::io("resolve the workspace directory", dir, e))?;
            if !dir.is_dir() {
                return Err(Error::not_found(format!(
                    "workspace directory {} does not exist or is not a directory; give the \
                     checkout to import into",
                    dir.display()
                )));
            }
            ImportOptions {
                workspace_dir: Some(dir),
                ..options.clone()
            }
        }
        None => options.clone(),
    };
    let mut importer = Importer {
        store,
        options,
        summary: ImportSummary::default(),
        workspaces: HashMap::new(),
        parents: HashMap::new(),
        seen: HashMap::new(),
        warnings: Vec::new(),
    };
    let mut stopped = false;
    let mut asked = || {
        stopped |= !keep_going();
        !stopped
    };
    let report = visit_path_while(path, on_progress, &mut asked, &mut |session| {
        importer.session(session)
    })?;
    let mut summary = importer.summary;
    summary.report = report;
    summary.stopped = stopped;
    for (file, reason) in importer.warnings {
        summary
            .report
            .warn(&file, At::Pointer("/projectHash"), reason);
    }
    Ok(summary)
}

impl Importer<'_> {
    fn resolve(&mut self, dir: &Path) -> Result<Workspace> {
        if let Some(ws) = self.workspaces.get(dir) {
            return Ok(ws.clone());
        }
        let tenant = &self.options.tenant;
        let ws = if dir.is_absolute() {
            Workspace::resolve_for_tenant(dir, tenant)?
        } else {
            // A path that is not absolute here (a Windows path on Unix, say) names a directory of
            // another machine: its text is the identity, never joined to our current directory.
            let key = dir.to_string_lossy();
            Workspace::from_parts(tenant, &key, dir, WorkspaceSource::Directory)
        };
        self.workspaces.insert(dir.to_path_buf(), ws.clone());
        Ok(ws)
    }

    fn workspace_for(&mut self, session: &ImportedSession) -> Result<Option<Workspace>> {
        if let Some(dir) = &self.options.workspace_dir {
            return self.resolve(dir).map(Some);
        }
        // A subagent works on its parent's project: the directory its log starts in is only
        // where the shell stood when it began (often a subfolder), which outside git would make
        // a workspace of its own and hide its work from the parent's memory. One already stored
        // stays where it is (stored alone before its parent, or by an older codeoid), so its
        // log goes on syncing instead of being refused as a session of another workspace.
        if session.kind == SessionKind::Subagent {
            let stored = self
                .store
                .session_workspace(&session.session_id, &self.options.tenant)?;
            if let Some(stored) = stored {
                return Ok(Some(stored));
            }
        }
        let parent = session.parent_session_id.as_ref();
        if let Some(parent) = parent.and_then(|p| self.parents.get(p)) {
            return Ok(Some(parent.workspace.clone()));
        }
        // A parent stored by an earlier import (its log imported alone, the subagent's now).
        if let Some(parent) = parent.filter(|_| session.kind == SessionKind::Subagent) {
            let stored = self.store.session_workspace(parent, &self.options.tenant)?;
            if let Some(stored) = stored {
                return Ok(Some(stored));
            }
        }
        if let Some(cwd) = &session.cwd {
            return self.resolve(cwd).map(Some);
        }
        let hash = session
            .meta
            .get("project_hash")
            .and_then(serde_json::Value::as_str)
            .filter(|_| session.format == LogFormat::GeminiCli);
        if let Some(hash) = hash {
            if let Some(root) = root_here(hash, self.options.fallback_dir.as_deref()) {
                return self.resolve(&root).map(Some);
            }
        }
        let Some(dir) = self.options.fallback_dir.clone() else {
            return Ok(None);
        };
        if let Some(hash) = hash {
            let reason = unmatched_root(&session.session_id, hash, &dir);
            self.warnings.push((session.source_path.clone(), reason));
        }
        self.resolve(&dir).map(Some)
    }

    fn lineage(&self, session: &ImportedSession) -> Option<Lineage> {
        if session.kind != SessionKind::Subagent {
            return None;
        }
        let parent_id = session.parent_session_id.clone()?;
        let parent = self.parents.get(&parent_id);
        Some(Lineage {
            parent_name: parent.and_then(|p| p.title.clone()),
            at_turn: parent.and_then(|p| {
                session
                    .parent_tool_call_id
                    .as_ref()
                    .and_then(|call| p.calls.get(call).copied())
            }),
            parent_session_id: parent_id,
            kind: LineageKind::Subagent,
        })
    }

    fn should_finish(&self, session: &ImportedSession) -> bool {
        let Some(idle) = self.options.finish_after else {
            return false;
        };
        match session.turns.iter().rev().find_map(|t| t.timestamp) {
            // A time in the future (clock skew) is treated as now: still active.
            Some(last) => (Utc::now() - last).to_std().is_ok_and(|age| age >= idle),
            None => true,
        }
    }

    fn session(&mut self, session: ImportedSession) -> Result<()> {
        if session.turns.is_empty() {
            self.summary.sessions_empty += 1;
            return Ok(());
        }
        if let Some(first) = self.seen.get(&session.session_id) {
            if *first != session.source_path {
                let reason = format!(
                    "session id already imported from {} in this import; two logs claiming one \
                     session (a resumed session that kept its id) are not merged",
                    first.display()
                );
                self.summary.skip(&session, reason);
                return Ok(());
            }
        }
        self.seen
            .insert(session.session_id.clone(), session.source_path.clone());
        let Some(workspace) = self.workspace_for(&session)? else {
            self.summary.skip(
                &session,
                "the log names no working directory; set a fallback workspace directory".into(),
            );
            return Ok(());
        };
        if session.kind == SessionKind::Main {
            self.remember_parent(&session, &workspace);
        }
        let new = NewSession {
            id: Some(session.session_id.clone()),
            name: session.title.clone(),
            provider: session.provider.clone(),
            model: session.model.clone(),
            created_at: session.started_at,
            lineage: self.lineage(&session),
            backing_context_id: None,
        };
        // Created here, or found: stored before, or by another import running at once. Which
        // it was is decided in the create's own transaction.
        let (stored, created) = match self.store.create_or_find_session(&workspace, new) {
            Ok(found) => found,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                self.summary.skip(&session, e.message().to_owned());
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        if !created {
            if let Some(reason) = self.conflict_with_stored(&session, stored.turn_count)? {
                self.summary.skip(&session, reason);
                return Ok(());
            }
        }
        let update = SessionUpdate {
            name: session.title.clone(),
            provider: session.provider.clone(),
            model: session.model.clone(),
            // Only a parent read in this run says everything about the link; a subagent log
            // imported alone must not erase what an earlier import of its parent established.
            lineage: self
                .lineage(&session)
                .filter(|l| self.parents.contains_key(&l.parent_session_id)),
        };
        let updated = self.store.update_session(&stored.id, &update)?;
        let mut changed = updated != stored;
        let finish = self.should_finish(&session);
        let batch = self.options.batch_turns;
        let count = session.turns.chunks(batch).count();
        for (index, turns) in session.turns.chunks(batch).enumerate() {
            let first_seq = (index * batch) as u64;
            let last = index + 1 == count;
            match self
                .store
                .sync_turns(&stored.id, first_seq, turns, finish && last)
            {
                Ok(synced) => {
                    changed |= !synced.is_noop();
                    self.summary.add(&synced);
                }
                Err(e) if e.kind() == ErrorKind::InvalidInput => {
                    self.summary.skip(&session, e.message().to_owned());
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        match (!created, changed) {
            (false, _) => self.summary.sessions_new += 1,
            (true, true) => self.summary.sessions_updated += 1,
            (true, false) => self.summary.sessions_unchanged += 1,
        }
        Ok(())
    }

    /// Why `session` must not be synced onto the stored session of its id, which holds
    /// `stored` turns: another conversation under the same id, or an older copy of a log that
    /// only grows. `None` when it may be.
    fn conflict_with_stored(
        &self,
        session: &ImportedSession,
        stored: u64,
    ) -> Result<Option<String>> {
        // A log that grew keeps its first turn; one that starts elsewhere is another
        // conversation under the same id, and syncing it would replace this one.
        let stored_first = self.store.turns(&session.session_id, 0..1)?;
        let stored_id = stored_first.first().and_then(|t| t.turn.id.as_deref());
        let incoming_id = session.turns[0].id.as_deref();
        if stored_id.is_some() && incoming_id.is_some() && stored_id != incoming_id {
            return Ok(Some(format!(
                "the stored session {:?} starts with turn {:?} but this log starts with {:?}: \
                 another conversation under the same id, left out so the stored one is not \
                 replaced",
                session.session_id,
                stored_id.unwrap_or_default(),
                incoming_id.unwrap_or_default()
            )));
        }
        // Reading more of a log that only grows never yields fewer turns, so this is an older
        // copy; its last turn may be a response cut short, which a sync would take for a
        // change and replace everything stored after it with.
        if session.format.only_appends() && (session.turns.len() as u64) < stored {
            return Ok(Some(format!(
                "this log holds {} turns and the stored session {:?} {stored}: an older copy of \
                 a log that only grows, left out so the stored session is not rolled back",
                session.turns.len(),
                session.session_id
            )));
        }
        Ok(None)
    }

    fn remember_parent(&mut self, session: &ImportedSession, workspace: &Workspace) {
        let mut calls = HashMap::new();
        for (index, turn) in session.turns.iter().enumerate() {
            for part in &turn.parts {
                if let Part::ToolCall(call) = part {
                    calls.insert(call.id.clone(), index as u64);
                }
            }
        }
        self.parents.insert(
            session.session_id.clone(),
            Parent {
                workspace: workspace.clone(),
                title: session.title.clone(),
                calls,
            },
        );
    }
}
