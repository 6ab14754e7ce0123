//! The workspace index over the store: fills [`IndexInput`] from SQLite aggregates and keeps one
//! [`IndexScheduler`] per calling session, so the block only changes when the schedule says so
//! and the system prompt stays byte-stable for prompt caching in between.

use std::sync::PoisonError;

use super::Memory;
use crate::error::Result;
use crate::index::{
    ClusterInput, HotFile, IndexInput, IndexScheduler, SessionSummary, SystemClock, build_index,
};
use crate::store::WorkspaceStats;

impl Memory {
    /// The workspace index block (DESIGN §4) for a system prompt, as seen from `session_id`
    /// (listed as `current`). Rebuilt after 5 new episodes or 60 s with at least one, never more
    /// than once per 15 s (see [`crate::index::IndexConfig`]); byte-identical in between. Empty
    /// for an empty workspace, when the index is switched off (`CODEOID_WORKSPACE_INDEX=0`) or
    /// when memory is disabled.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when `session_id` is not in this workspace; database errors.
    pub fn workspace_index(&self, session_id: Option<&str>) -> Result<String> {
        if !self.config.memory_enabled {
            return Ok(String::new());
        }
        if let Some(id) = session_id {
            self.session(id)?;
        }
        let stats = self.store.workspace_stats(self.workspace.id())?;
        let mut schedulers = self.indexes.lock().unwrap_or_else(PoisonError::into_inner);
        let key = session_id.unwrap_or_default().to_string();
        if !schedulers.contains_key(&key) {
            let scheduler = IndexScheduler::new(self.config.index.clone(), SystemClock)?;
            schedulers.insert(key.clone(), scheduler);
        }
        let Some(scheduler) = schedulers.get_mut(&key) else {
            return Ok(String::new());
        };
        let text = scheduler.refresh(stats.episodes, |now| {
            let input = self.index_input(session_id, stats)?;
            build_index(&input, &self.config.index, now)
        })?;
        Ok(text.to_string())
    }

    fn index_input(&self, session_id: Option<&str>, stats: WorkspaceStats) -> Result<IndexInput> {
        let ws = self.workspace.id();
        let hot_files = self
            .store
            .hot_files(ws, self.config.index.max_hot_files)?
            .into_iter()
            .map(|f| HotFile {
                path: f.path,
                touches: f.touches,
                last_touched: f.last_at,
            })
            .collect();
        let summary = |session: crate::store::Session| SessionSummary {
            id: session.id,
            first_intent: session.first_intent,
            last_activity: session.last_activity_at,
        };
        let mut sessions: Vec<SessionSummary> = self
            .store
            .recent_sessions(ws, self.config.index.max_sessions.max(1) * 2)?
            .into_iter()
            .map(|r| summary(r.session))
            .collect();
        // The calling session is listed first as `current` even when the recent ones leave it
        // out (a subagent, or a session quiet for longer than the others).
        if let Some(id) = session_id.filter(|id| !sessions.iter().any(|s| s.id == *id)) {
            sessions.push(summary(self.session(id)?));
        }
        Ok(IndexInput {
            workspace: self.workspace_name.clone(),
            episode_count: stats.episodes,
            session_count: stats.sessions,
            last_activity: stats.last_activity,
            hot_files,
            sessions,
            current_session: session_id.map(str::to_string),
            embedded: self.cluster_input()?,
        })
    }

    /// The most recent embedded episodes (up to the index's clustering cap), one vector each,
    /// from the retriever's in-memory index. Without a model the block simply has no cluster
    /// section.
    fn cluster_input(&self) -> Result<ClusterInput> {
        if self.config.index.max_clusters < 2 {
            return Ok(ClusterInput::none());
        }
        self.retriever
            .cluster_input(self.config.index.max_cluster_episodes)
    }
}
