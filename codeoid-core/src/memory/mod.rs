//! [`Memory`]: the one object a harness holds. It ties a store to a workspace and runs every
//! mechanism of codeoid over it: recording turns, reading episodes back, hybrid recall with a
//! background embedding worker, the four memory tools, rotation, the workspace index and
//! compressed command runs.
//!
//! Each mechanism lives in its own module (`store`, `rotate`, `index`, `compress`...) and knows
//! nothing of the others; this module is the thin layer that composes them, one file per
//! capability. The C ABI and the Python bindings wrap `Memory`, so everything a harness needs is
//! reachable from here.
//!
//! Scoping: a `Memory` is bound to one workspace. Every read a model can reach (episodes,
//! timeline, sessions) is checked against it; another workspace's ids are "not found".
//!
//! `Memory` is `Send + Sync`; share it with `Arc`.

mod config;
mod index;
mod lineage;
mod messages;
mod recall;
mod rotation;
mod run;
mod tools;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub use config::MemoryConfig;
pub use rotation::{RotationOutcome, TurnOutcome};
pub use run::StoreSink;

use crate::canonical::Turn;
use crate::compress::{Config as CompressConfig, Registry};
use crate::error::{Error, Result};
use crate::index::IndexScheduler;
use crate::retrieve::Retriever;
use crate::rotate::RotationPolicy;
use crate::store::{
    self, NewSession, Recorded, Session, Store, StoredEpisode, TimelinePage, TimelineQuery,
    Workspace,
};

/// Session memory for one workspace.
pub struct Memory {
    store: Arc<Store>,
    workspace: Workspace,
    workspace_name: String,
    config: MemoryConfig,
    rotation: RotationPolicy,
    compress: Registry,
    /// One scheduler per calling session (the index labels that session `current`), so each
    /// session's system prompt stays byte-stable between rebuilds.
    indexes: Mutex<HashMap<String, IndexScheduler>>,
    /// Held while provider messages are numbered and recorded (see `messages`).
    message_numbering: Mutex<()>,
    /// Hybrid recall and the embedding worker (stopped, and joined, when memory drops).
    retriever: Retriever,
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("store", &self.store.path())
            .field("workspace", &self.workspace.id())
            .finish_non_exhaustive()
    }
}

impl Memory {
    /// Opens (creating if needed) the store and binds it to the workspace of
    /// `config.workspace_dir`. A `db_path` of `:memory:` is a private in-memory store.
    ///
    /// # Errors
    /// Whatever opening the store reports ([`crate::ErrorKind::Corrupt`],
    /// [`crate::ErrorKind::SchemaTooNew`], [`crate::ErrorKind::Io`]...),
    /// [`crate::ErrorKind::NotFound`] when `config.workspace_dir` is not a directory, an invalid
    /// rotation or index config ([`crate::ErrorKind::InvalidInput`]), or an unreadable
    /// compression rule file.
    pub fn open(config: MemoryConfig) -> Result<Memory> {
        let path = match &config.db_path {
            Some(path) => path.clone(),
            None => store::default_path()?,
        };
        // `:memory:`, as in `sqlite3`: a private store that ends with this memory.
        let store = if path.as_os_str() == store::IN_MEMORY {
            Store::open_in_memory_with(config.store.clone())?
        } else {
            Store::open_with(&path, config.store.clone())?
        };
        Memory::with_store(Arc::new(store), config)
    }

    /// Binds an already open store (shared with other `Memory` values or threads) to the
    /// workspace of `config.workspace_dir`; `config.db_path` and `config.store` are ignored.
    ///
    /// # Errors
    /// As [`Memory::open`], minus opening the store.
    pub fn with_store(store: Arc<Store>, config: MemoryConfig) -> Result<Memory> {
        let dir = match &config.workspace_dir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()
                .map_err(|e| Error::io("read", Path::new("the current directory"), e))?,
        };
        if !dir.is_dir() {
            return Err(Error::not_found(format!(
                "workspace directory {} does not exist or is not a directory; give the \
                 checkout the agent works in",
                dir.display()
            )));
        }
        let workspace = Workspace::resolve_for_tenant(&dir, &config.tenant)?;
        Memory::for_workspace(store, workspace, config)
    }

    /// Binds an already open store to a known `workspace` (for example one listed by
    /// [`Store::workspaces`]); `config.workspace_dir`, `config.tenant`, `config.db_path` and
    /// `config.store` are ignored.
    ///
    /// # Errors
    /// An invalid rotation, index, retrieval or embedding config
    /// ([`crate::ErrorKind::InvalidInput`]) or an unreadable compression rule file.
    pub fn for_workspace(
        store: Arc<Store>,
        workspace: Workspace,
        config: MemoryConfig,
    ) -> Result<Memory> {
        let workspace_name = workspace
            .root()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| workspace.root().display().to_string());
        let rotation = RotationPolicy::new(config.rotation.clone())?;
        config.index.validate()?;
        let compress = match &config.compress_rules {
            Some(path) => Registry::new(&CompressConfig::load(path)?)?,
            None => Registry::builtin()?,
        };
        let mut embedding = config.embedding.clone();
        if !config.memory_enabled {
            // Nothing reads vectors while memory is off; a later open with memory on backfills.
            embedding.model = crate::retrieve::ModelChoice::Disabled;
        }
        let retriever = Retriever::new(
            Arc::clone(&store),
            workspace.clone(),
            config.retrieval.clone(),
            embedding,
        )?;
        Ok(Memory {
            store,
            workspace,
            workspace_name,
            config,
            rotation,
            compress,
            indexes: Mutex::new(HashMap::new()),
            message_numbering: Mutex::new(()),
            retriever,
        })
    }

    /// The underlying store (shared).
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The workspace this memory is bound to.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// A short human name of the workspace: its root directory's name.
    pub fn workspace_name(&self) -> &str {
        &self.workspace_name
    }

    /// The settings this memory was opened with.
    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    /// Starts a session in this workspace. With the id of an existing session of this workspace,
    /// returns it unchanged.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] for an empty id; [`crate::ErrorKind::AlreadyExists`]
    /// when the id belongs to another workspace.
    pub fn start_session(&self, new: NewSession) -> Result<Session> {
        self.store.create_session(&self.workspace, new)
    }

    /// Session `id` of this workspace.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when it does not exist here (another workspace's session
    /// is not found either).
    pub fn session(&self, id: &str) -> Result<Session> {
        match self.store.session(id) {
            Ok(session) if session.workspace_id == self.workspace.id() => Ok(session),
            Ok(_) => Err(Error::not_found(format!(
                "session {id:?} not found in this workspace; use the id of one of this workspace's \
                 sessions (as listed)"
            ))),
            Err(e) => Err(e),
        }
    }

    /// Checks that each session named is one of this workspace's: a label relative to, or a
    /// filter on, a session that is not there would quietly mislabel or match nothing.
    fn require_sessions<'a>(&self, ids: impl IntoIterator<Item = Option<&'a str>>) -> Result<()> {
        for id in ids.into_iter().flatten() {
            self.session(id)?;
        }
        Ok(())
    }

    /// Every session of this workspace, oldest first.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn sessions(&self) -> Result<Vec<Session>> {
        self.store.sessions(self.workspace.id())
    }

    /// Records turns in bulk (one transaction), for importers and replays. Unlike
    /// [`Memory::record_turn`] it does not evaluate rotation: replaying history must not rotate.
    ///
    /// # Errors
    /// As [`Store::record_turns`]; nothing is written when any turn is invalid.
    pub fn record_turns(&self, session_id: &str, turns: &[Turn]) -> Result<Vec<Recorded>> {
        self.session(session_id)?;
        let recorded = self.store.record_turns(session_id, turns)?;
        self.retriever.notify_recorded();
        Ok(recorded)
    }

    /// The canonical turns of session `session_id` with sequence numbers in `range`, in order:
    /// what a harness that restarts rebuilds its conversation from.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when the session is not in this workspace.
    pub fn turns(
        &self,
        session_id: &str,
        range: impl std::ops::RangeBounds<u64>,
    ) -> Result<Vec<crate::store::StoredTurn>> {
        self.session(session_id)?;
        self.store.turns(session_id, range)
    }

    /// Closes session `session_id`: pending tool calls become cancelled episodes and a buffered
    /// final answer is stored. Returns the ids of the episodes this wrote.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when the session is not in this workspace.
    pub fn finish_session(&self, session_id: &str) -> Result<Vec<String>> {
        self.session(session_id)?;
        let ids = self.store.finish_session(session_id)?;
        self.retriever.notify_recorded();
        Ok(ids)
    }

    /// One page of this workspace's timeline, newest first.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] for a limit out of range; [`crate::ErrorKind::NotFound`]
    /// when `before` names an episode that is not in this workspace.
    pub fn timeline(&self, query: &TimelineQuery) -> Result<TimelinePage> {
        self.store.timeline(self.workspace.id(), query)
    }

    /// The model-facing text of a timeline page, labelled relative to `current_session`.
    ///
    /// # Errors
    /// As [`Memory::timeline`]; [`crate::ErrorKind::NotFound`] when `current_session` is not in
    /// this workspace.
    pub fn timeline_text(
        &self,
        current_session: Option<&str>,
        query: &TimelineQuery,
    ) -> Result<String> {
        self.require_sessions([current_session])?;
        self.store
            .timeline_text(self.workspace.id(), current_session, query)
    }

    /// Episode `id` of this workspace, byte for byte.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when it does not exist in this workspace;
    /// [`crate::ErrorKind::InvalidInput`] when `id` is empty.
    pub fn episode(&self, id: &str) -> Result<StoredEpisode> {
        self.store.episode(self.workspace.id(), id)
    }

    /// Episode `id` under the `get_episode` header, then its whole stored content: for people
    /// (`codeoid show`). The tool shows it in pages: see [`Memory::episode_page`].
    ///
    /// # Errors
    /// As [`Memory::episode`]; [`crate::ErrorKind::NotFound`] when `current_session` is not in
    /// this workspace.
    pub fn episode_text(&self, current_session: Option<&str>, id: &str) -> Result<String> {
        self.require_sessions([current_session])?;
        self.store
            .episode_text(self.workspace.id(), current_session, id)
    }

    /// One page of episode `id` as the `get_episode` tool shows it: at most `max_chars`
    /// characters of its whole content from character `offset` on (a capped episode's middle
    /// included), ending with the arguments of the next page when there is more. See
    /// [`crate::store::Store::episode_page_text`].
    ///
    /// # Errors
    /// As [`Memory::episode_text`]; [`crate::ErrorKind::InvalidInput`] when `offset` is at or
    /// past the end of a non-empty content (past 0 for an empty one) or `max_chars` is 0.
    pub fn episode_page(
        &self,
        current_session: Option<&str>,
        id: &str,
        offset: u64,
        max_chars: usize,
    ) -> Result<String> {
        self.require_sessions([current_session])?;
        self.store
            .episode_page_text(self.workspace.id(), current_session, id, offset, max_chars)
    }

    /// The exact bytes of raw blob `blob_id` (a capped episode's whole content, or a command's
    /// stdout/stderr).
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when no episode of this workspace links that blob.
    pub fn blob(&self, blob_id: &str) -> Result<Vec<u8>> {
        self.store.blob(self.workspace.id(), blob_id)
    }
}
