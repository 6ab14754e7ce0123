//! The background embedding worker of one workspace: it loads (or downloads) the model, builds
//! the in-memory vector index from the vectors already stored, then embeds every episode that
//! has none, oldest first, and keeps doing so as episodes arrive.
//!
//! How it stays out of the way:
//! - Recording never waits for it: writers only [`Worker::wake`] it. It also looks for new
//!   episodes every `poll_millis` (another process, or a direct store write, may have added
//!   some).
//! - It embeds a few episodes per call (`EmbeddingConfig::batch_episodes`) and, before each call,
//!   yields while a recall is running (bounded, so a stream of queries cannot starve it): a
//!   query's embedding then gets the thread pool at once instead of queueing behind a batch.
//! - Model loading and downloads happen on its thread; `Memory::open` only checks, without the
//!   network, whether a model exists.
//!
//! Invariants:
//! - A cursor: every episode of the workspace with a primary key at or below it is in the index
//!   or was given up on (its text made the model fail; counted in the warnings). Episodes are
//!   taken in key order, so [`Worker::flush`] only has to wait for the cursor to pass the largest
//!   key that existed when it was called. Episodes an earlier run left unembedded (a crash, no
//!   model then) are found at the next start, because the cursor starts at 0.
//! - Vectors that already exist for the model (an earlier run, another process) are loaded, not
//!   recomputed. Vectors of other models are ignored, and deleted once this model has embedded
//!   every episode of the workspace if no worker has used their model for
//!   `EmbeddingConfig::keep_other_models`: a model change re-embeds and leaves no garbage, and
//!   two processes with two models do not delete each other's work.
//! - Nothing blocks forever: a panic or a failure that stops the worker moves it to
//!   `Unavailable` with a warning, which releases every waiter; recall then works lexically.
//!
//! This module owns the thread, its state and its API; the pass over the episodes lives in
//! `indexing`, finding and loading the model in `model`. Deliberately not here: scoring (the
//! engine), the model math (`embed`).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chrono::Utc;

use super::config::{EmbeddingConfig, ModelChoice};
use super::vector_index::VectorIndex;
use crate::embed::{DownloadProgress, Embedder, ModelLocator};
use crate::error::{Error, Result};
use crate::store::Store;

mod indexing;
mod model;

use indexing::{drain, drop_old_models, load_index, prune_deleted};

/// How often a waiting [`Worker::flush`] asks its caller whether to go on waiting.
const FLUSH_POLL: Duration = Duration::from_millis(100);

/// Consecutive failed passes of the embedding loop after which a flush returns an error
/// instead of waiting for a worker that cannot make progress.
const FLUSH_GIVES_UP_AFTER: u32 = 3;

/// How often a running worker renews the record that its model is in use on this store.
const MODEL_USE_REFRESH: Duration = Duration::from_secs(3600);

/// How the warning about episodes the model failed on starts (it is replaced, not repeated).
const FAILURE_WARNING: &str = "the embedding model failed on ";

/// What the worker is doing, as callers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbeddingPhase {
    /// Downloading the model (recall is lexical meanwhile).
    Downloading,
    /// Loading the model and the stored vectors (recall waits for this; it takes about a
    /// second, more with a very large workspace).
    Loading,
    /// Embedding new episodes as they arrive.
    Ready,
    /// No model could be found or loaded, or the worker stopped; recall is lexical. See the
    /// warnings.
    Unavailable,
    /// Embeddings are switched off by configuration.
    Disabled,
}

/// A snapshot of the worker's progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingStatus {
    /// What the worker is doing.
    pub phase: EmbeddingPhase,
    /// The model id vectors are recorded with, once the model is loaded.
    pub model_id: Option<String>,
    /// Episodes in the in-memory index.
    pub indexed_episodes: usize,
    /// Window vectors in the in-memory index.
    pub indexed_windows: usize,
    /// Bytes the in-memory index holds.
    pub index_bytes: usize,
    /// Episodes the model failed on in this run (left to BM25).
    pub failed_episodes: u64,
    /// While the model downloads: the file arriving and its bytes so far (for a progress bar).
    pub download: Option<DownloadProgress>,
}

struct State {
    phase: EmbeddingPhase,
    embedder: Option<Arc<Embedder>>,
    cursor: i64,
    wake: bool,
    shutdown: bool,
    warnings: Vec<String>,
    failed: u64,
    download: Option<DownloadProgress>,
    /// The last store error of the embedding loop while it keeps failing (reset by a pass that
    /// succeeds): a flush stops waiting for a worker that cannot make progress.
    store_failure: Option<(u32, Error)>,
    /// The store's count of deleted episodes when the index last dropped the deleted ones.
    deletions_seen: i64,
}

/// What the worker thread and its callers share.
pub(crate) struct Shared {
    store: Arc<Store>,
    workspace_id: String,
    config: EmbeddingConfig,
    state: Mutex<State>,
    changed: Condvar,
    index: RwLock<Option<VectorIndex>>,
    active_queries: AtomicUsize,
}

/// Marks a recall in progress for as long as it lives (the worker yields to it).
pub(crate) struct QueryGuard<'a>(&'a AtomicUsize);

impl Drop for QueryGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The handle `Memory` holds: the shared state and the thread, stopped on drop.
pub(crate) struct Worker {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_phase(&self, phase: EmbeddingPhase, warning: Option<String>) {
        let mut state = self.lock();
        state.phase = phase;
        if let Some(warning) = warning {
            if !state.warnings.contains(&warning) {
                state.warnings.push(warning);
            }
        }
        drop(state);
        self.changed.notify_all();
    }

    fn warn(&self, warning: String) {
        let mut state = self.lock();
        if !state.warnings.contains(&warning) {
            state.warnings.push(warning);
        }
    }

    fn stopping(&self) -> bool {
        self.lock().shutdown
    }
}

/// The warning for lexical-only memory, built from why no model is available.
fn lexical_warning(reason: &str) -> String {
    format!("embeddings unavailable, recall is lexical only (BM25, recency, paths): {reason}")
}

impl Worker {
    /// Starts the worker for `workspace_id` with a validated `config`. Only the model's
    /// presence is checked here (no network, no loading); everything else happens on the
    /// worker's thread. When the thread cannot be spawned the worker is `Unavailable` with a
    /// warning: memory stays lexical rather than failing.
    pub(crate) fn start(store: Arc<Store>, workspace_id: &str, config: EmbeddingConfig) -> Worker {
        let locator = match &config.model {
            ModelChoice::Disabled => None,
            ModelChoice::Auto => Some(ModelLocator::from_env()),
            ModelChoice::Locate(locator) => Some(locator.clone()),
            ModelChoice::Dir(dir) => Some(ModelLocator {
                explicit_dir: Some(dir.clone()),
                env_dir: None,
                hf_cache: None,
                repo: crate::embed::DEFAULT_MODEL_REPO.to_owned(),
                revision: "main".to_owned(),
                download: None,
            }),
        };
        let (phase, warning) = match &locator {
            None => (EmbeddingPhase::Disabled, None),
            Some(locator) => match locator.locate() {
                Ok(_) => (EmbeddingPhase::Loading, None),
                Err(_) if model::can_download(locator) => (EmbeddingPhase::Downloading, None),
                Err(e) => (
                    EmbeddingPhase::Unavailable,
                    Some(lexical_warning(e.message())),
                ),
            },
        };
        let runs = matches!(phase, EmbeddingPhase::Loading | EmbeddingPhase::Downloading);
        let shared = Arc::new(Shared {
            store,
            workspace_id: workspace_id.to_owned(),
            config,
            state: Mutex::new(State {
                phase,
                embedder: None,
                cursor: 0,
                wake: false,
                shutdown: false,
                warnings: warning.into_iter().collect(),
                download: None,
                store_failure: None,
                deletions_seen: 0,
                failed: 0,
            }),
            changed: Condvar::new(),
            index: RwLock::new(None),
            active_queries: AtomicUsize::new(0),
        });
        let thread = locator.filter(|_| runs).and_then(|locator| {
            let worker_shared = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name("codeoid-embed".into())
                .spawn(move || thread_main(&worker_shared, &locator));
            match spawned {
                Ok(handle) => Some(handle),
                Err(e) => {
                    shared.set_phase(
                        EmbeddingPhase::Unavailable,
                        Some(lexical_warning(&format!(
                            "cannot start the embedding worker thread ({e})"
                        ))),
                    );
                    None
                }
            }
        });
        Worker { shared, thread }
    }

    /// Wakes the worker: new episodes were recorded.
    pub(crate) fn wake(&self) {
        self.shared.lock().wake = true;
        self.shared.changed.notify_all();
    }

    /// The embedder once it is loaded, after waiting while the model is loading (not while it
    /// is downloading). `None` when recall must be lexical.
    pub(crate) fn ready_embedder(&self) -> Option<Arc<Embedder>> {
        let mut state = self.shared.lock();
        while state.phase == EmbeddingPhase::Loading {
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        match state.phase {
            EmbeddingPhase::Ready => state.embedder.clone(),
            _ => None,
        }
    }

    /// Marks a recall in progress until the guard drops.
    pub(crate) fn query_guard(&self) -> QueryGuard<'_> {
        self.shared.active_queries.fetch_add(1, Ordering::AcqRel);
        QueryGuard(&self.shared.active_queries)
    }

    /// Runs `f` on the vector index (when it is built).
    pub(crate) fn with_index<T>(&self, f: impl FnOnce(Option<&VectorIndex>) -> T) -> T {
        let guard = self
            .shared
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        f(guard.as_ref())
    }

    /// Waits until every episode of the workspace recorded before the call is embedded (or the
    /// worker cannot embed: no model, disabled, stopped), or `timeout` passes, or
    /// `keep_waiting` (asked every [`FLUSH_POLL`] while waiting) says to stop. Returns `true`
    /// when everything is embedded, `false` on a timeout or a stop.
    ///
    /// # Errors
    /// A database error reading the newest episode.
    pub(crate) fn flush(
        &self,
        timeout: Option<Duration>,
        keep_waiting: &mut dyn FnMut() -> bool,
    ) -> Result<bool> {
        let target = self
            .shared
            .store
            .max_episode_pk(&self.shared.workspace_id)?;
        let deleted = self.shared.store.episodes_deleted()?;
        // A timeout too long to represent as an instant is no deadline at all.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut state = self.shared.lock();
        state.wake = true;
        self.shared.changed.notify_all();
        let mut asked = Instant::now();
        loop {
            if let Some((failures, error)) = &state.store_failure {
                if *failures >= FLUSH_GIVES_UP_AFTER {
                    return Err(Error::new(
                        error.kind(),
                        format!(
                            "flush gave up: the embedding worker failed {failures} times in a \
                             row to read or write the store (it keeps retrying): {}",
                            error.message()
                        ),
                    ));
                }
            }
            let done = match state.phase {
                EmbeddingPhase::Unavailable | EmbeddingPhase::Disabled => true,
                EmbeddingPhase::Ready => state.cursor >= target && state.deletions_seen >= deleted,
                EmbeddingPhase::Loading | EmbeddingPhase::Downloading => false,
            };
            if done {
                return Ok(true);
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Ok(false);
            }
            let since_asked = now.duration_since(asked);
            if since_asked >= FLUSH_POLL {
                // Asked without the lock: the caller may take its time (a binding checking for
                // a pending Ctrl-C), and the worker needs the lock to make progress.
                drop(state);
                if !keep_waiting() {
                    return Ok(false);
                }
                asked = Instant::now();
                state = self.shared.lock();
                continue;
            }
            let mut wait = FLUSH_POLL - since_asked;
            if let Some(deadline) = deadline {
                wait = wait.min(deadline - now);
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Warnings so far (each once): why recall is lexical, episodes the model failed on.
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.shared.lock().warnings.clone()
    }

    /// A snapshot of the worker's progress.
    pub(crate) fn status(&self) -> EmbeddingStatus {
        let (phase, model_id, failed, download) = {
            let state = self.shared.lock();
            (
                state.phase.clone(),
                state.embedder.as_ref().map(|e| e.model_id().to_owned()),
                state.failed,
                state.download.clone(),
            )
        };
        self.with_index(|index| EmbeddingStatus {
            phase,
            model_id,
            indexed_episodes: index.map_or(0, VectorIndex::len),
            indexed_windows: index.map_or(0, VectorIndex::rows),
            index_bytes: index.map_or(0, VectorIndex::memory_bytes),
            failed_episodes: failed,
            download,
        })
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let downloading = {
            let mut state = self.shared.lock();
            state.shutdown = true;
            state.phase == EmbeddingPhase::Downloading
        };
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            // A download cannot be interrupted; the thread notices the shutdown as soon as it
            // returns and exits without touching the store. Anything else stops within one batch.
            if !downloading {
                let _ = thread.join();
            }
        }
    }
}

/// The worker thread's body: [`run`], with any failure or panic turned into `Unavailable` and a
/// warning, so nobody waits for a worker that is gone.
fn thread_main(shared: &Arc<Shared>, locator: &ModelLocator) {
    let result = catch_unwind(AssertUnwindSafe(|| run(shared, locator)));
    let reason = match result {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e.message().to_owned(),
        Err(_) => "the embedding worker panicked".to_owned(),
    };
    shared.set_phase(
        EmbeddingPhase::Unavailable,
        Some(lexical_warning(&format!(
            "{reason}; reopen memory to retry"
        ))),
    );
}

/// The worker thread: model, index, then the embedding loop until shutdown.
fn run(shared: &Arc<Shared>, locator: &ModelLocator) -> Result<()> {
    let Some(embedder) = model::acquire(shared, locator) else {
        return Ok(());
    };
    // Read before loading, so a deletion during the load is pruned by the first pass.
    let deletions = shared.store.episodes_deleted()?;
    let index = load_index(shared, &embedder)?;
    shared.lock().deletions_seen = deletions;
    *shared.index.write().unwrap_or_else(PoisonError::into_inner) = Some(index);
    {
        let mut state = shared.lock();
        state.embedder = Some(Arc::clone(&embedder));
        state.phase = EmbeddingPhase::Ready;
    }
    shared.changed.notify_all();
    let mut dropped_old = false;
    let mut noted_use: Option<Instant> = None;
    loop {
        if shared.stopping() {
            return Ok(());
        }
        // Tell other processes on this store that this model is in use (their cleanup keeps
        // its vectors); refreshed hourly while the worker lives.
        if noted_use.is_none_or(|at| at.elapsed() >= MODEL_USE_REFRESH)
            && shared
                .store
                .note_model_use(embedder.model_id(), Utc::now())
                .is_ok()
        {
            noted_use = Some(Instant::now());
        }
        match prune_deleted(shared).and_then(|()| drain(shared, &embedder)) {
            Ok(()) => {
                shared.lock().store_failure = None;
                if !dropped_old {
                    dropped_old = drop_old_models(shared, embedder.model_id());
                }
            }
            Err(e) => {
                shared.warn(format!(
                    "the embedding worker could not read or write the store: {}; it retries \
                     every {} ms",
                    e.full_message(),
                    shared.config.poll_millis
                ));
                {
                    let mut state = shared.lock();
                    let failures = state.store_failure.as_ref().map_or(0, |(n, _)| *n);
                    state.store_failure = Some((failures.saturating_add(1), e));
                }
                shared.changed.notify_all();
            }
        }
        let mut state = shared.lock();
        if !state.wake && !state.shutdown {
            state = shared
                .changed
                .wait_timeout(state, Duration::from_millis(shared.config.poll_millis))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state.wake = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_warning_says_what_still_works() {
        let w = lexical_warning("no embedding model found");
        assert!(w.contains("lexical only") && w.ends_with("no embedding model found"));
    }
}
