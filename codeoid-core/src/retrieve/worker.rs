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
//!   every episode of the workspace, so a model change re-embeds and leaves no garbage.
//! - Nothing blocks forever: a panic or a failure that stops the worker moves it to
//!   `Unavailable` with a warning, which releases every waiter; recall then works lexically.
//!
//! Deliberately not here: scoring (the engine), the model math (`embed`).

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, RwLock, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::config::{EmbeddingConfig, ModelChoice};
use super::vector_index::{EntryMeta, VectorIndex};
use crate::embed::{
    DownloadProgress, Embedder, EpisodeText, ModelLocator, ProgressFn, ResolvedModel,
};
use crate::error::{Error, Result};
use crate::store::{EpisodeMeta, QueuedEpisode, Store};

/// Consecutive failed passes of the embedding loop after which a flush returns an error
/// instead of waiting for a worker that cannot make progress.
const FLUSH_GIVES_UP_AFTER: u32 = 3;
/// Episodes read from the queue per round trip.
const QUEUE_PAGE: usize = 256;

/// Old-model vectors deleted per transaction.
const DROP_CHUNK: usize = 4096;

/// How often a running worker renews the record that its model is in use on this store.
const MODEL_USE_REFRESH: Duration = Duration::from_secs(3600);

/// How the warning about episodes the model failed on starts (it is replaced, not repeated).
const FAILURE_WARNING: &str = "the embedding model failed on ";

/// Longest a batch waits for running queries before it goes ahead anyway.
const MAX_YIELD: Duration = Duration::from_millis(500);

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
                Err(_) if can_download(locator) => (EmbeddingPhase::Downloading, None),
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
    /// worker cannot embed: no model, disabled, stopped), or `timeout` passes. Returns `true`
    /// when it did not time out.
    ///
    /// # Errors
    /// A database error reading the newest episode.
    pub(crate) fn flush(&self, timeout: Option<Duration>) -> Result<bool> {
        let target = self
            .shared
            .store
            .max_episode_pk(&self.shared.workspace_id)?;
        // A timeout too long to represent as an instant is no deadline at all.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut state = self.shared.lock();
        state.wake = true;
        self.shared.changed.notify_all();
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
                EmbeddingPhase::Ready => state.cursor >= target,
                EmbeddingPhase::Loading | EmbeddingPhase::Downloading => false,
            };
            if done {
                return Ok(true);
            }
            match deadline {
                None => {
                    state = self
                        .shared
                        .changed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Ok(false);
                    }
                    state = self
                        .shared
                        .changed
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
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

fn can_download(locator: &ModelLocator) -> bool {
    locator.explicit_dir.is_none()
        && locator.env_dir.is_none()
        && locator.download.is_some()
        && locator.hf_cache.is_some()
}

/// The worker thread: model, index, then the embedding loop until shutdown.
fn run(shared: &Arc<Shared>, locator: &ModelLocator) -> Result<()> {
    // Weak: the callback must not keep the worker's state alive.
    let progress: ProgressFn = {
        let shared = Arc::downgrade(shared);
        Arc::new(move |p: &DownloadProgress| {
            if let Some(shared) = shared.upgrade() {
                shared.lock().download = Some(p.clone());
            }
        })
    };
    let resolved = locator.resolve(Some(progress));
    shared.lock().download = None;
    let resolved = match resolved {
        Ok(resolved) => resolved,
        Err(e) => {
            shared.set_phase(
                EmbeddingPhase::Unavailable,
                Some(lexical_warning(e.message())),
            );
            return Ok(());
        }
    };
    if shared.stopping() {
        return Ok(());
    }
    shared.set_phase(EmbeddingPhase::Loading, None);
    let embedder = match load_shared(&resolved) {
        Ok(embedder) => embedder,
        Err(e) => {
            shared.set_phase(
                EmbeddingPhase::Unavailable,
                Some(lexical_warning(&format!(
                    "the model in {} does not load: {}",
                    resolved.dir.display(),
                    e.message()
                ))),
            );
            return Ok(());
        }
    };
    let index = load_index(shared, &embedder)?;
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
        match drain(shared, &embedder) {
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

/// The embedder for `resolved`, shared with every other live worker of this process that uses
/// the same checkpoint (a process serving several workspaces loads the weights once). The lock
/// is held while loading, so two workers starting together load once too.
fn load_shared(resolved: &ResolvedModel) -> Result<Arc<Embedder>> {
    type Loaded = HashMap<(PathBuf, Option<String>), Weak<Embedder>>;
    static LOADED: OnceLock<Mutex<Loaded>> = OnceLock::new();
    let mut loaded = LOADED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    loaded.retain(|_, weak| weak.strong_count() > 0);
    let key = (resolved.dir.clone(), resolved.repo.clone());
    if let Some(embedder) = loaded.get(&key).and_then(Weak::upgrade) {
        return Ok(embedder);
    }
    let embedder = Arc::new(resolved.load()?);
    loaded.insert(key, Arc::downgrade(&embedder));
    Ok(embedder)
}

/// The index of every vector the store already has for this model.
fn load_index(shared: &Shared, embedder: &Embedder) -> Result<VectorIndex> {
    let mut index = VectorIndex::new(embedder.dim());
    let mut current: Option<EpisodeMeta> = None;
    let mut windows: Vec<Vec<f32>> = Vec::new();
    let flush = |meta: &EpisodeMeta, windows: &mut Vec<Vec<f32>>, index: &mut VectorIndex| {
        // Rotation events embedded by an earlier version stay out of the index.
        if meta.rotation {
            windows.clear();
            return;
        }
        // A stored episode whose vectors the index refuses is skipped here; `drain` finds it
        // missing from the index and `process` embeds it again.
        let _ = index.add(entry_meta(meta), windows);
        windows.clear();
    };
    shared.store.scan_vectors(
        &shared.workspace_id,
        embedder.model_id(),
        |meta, _window, vector| {
            if current.as_ref().is_some_and(|c| c.pk != meta.pk) {
                if let Some(done) = current.take() {
                    flush(&done, &mut windows, &mut index);
                }
            }
            if current.is_none() {
                current = Some(meta.clone());
            }
            windows.push(vector.to_vec());
            Ok(())
        },
    )?;
    if let Some(done) = current.take() {
        flush(&done, &mut windows, &mut index);
    }
    Ok(index)
}

fn entry_meta(meta: &EpisodeMeta) -> EntryMeta<'_> {
    EntryMeta {
        pk: meta.pk,
        session_id: &meta.session_id,
        tool_name: meta.tool_name.as_deref(),
        created_at: meta.created_at,
    }
}

fn add_to_index(shared: &Shared, meta: &EpisodeMeta, windows: &[Vec<f32>]) -> bool {
    let mut guard = shared.index.write().unwrap_or_else(PoisonError::into_inner);
    guard
        .as_mut()
        .is_some_and(|index| index.add(entry_meta(meta), windows).is_ok())
}

fn advance(shared: &Shared, pk: i64) {
    let mut state = shared.lock();
    state.cursor = state.cursor.max(pk);
    drop(state);
    shared.changed.notify_all();
}

/// Embeds or loads every episode past the cursor, in key order, until none is left.
fn drain(shared: &Shared, embedder: &Embedder) -> Result<()> {
    loop {
        let cursor = shared.lock().cursor;
        let page = shared.store.episodes_after(
            &shared.workspace_id,
            embedder.model_id(),
            cursor,
            QUEUE_PAGE,
        )?;
        if page.is_empty() {
            return Ok(());
        }
        let mut todo: Vec<&QueuedEpisode> = Vec::new();
        for queued in &page {
            if shared.stopping() {
                return Ok(());
            }
            let indexed = shared
                .index
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .is_some_and(|i| i.contains(queued.meta.pk));
            if !indexed {
                todo.push(queued);
            }
            let full = todo.len() >= shared.config.batch_episodes;
            if full {
                process(shared, embedder, &todo)?;
                todo.clear();
            }
            if todo.is_empty() {
                advance(shared, queued.meta.pk);
            }
        }
        process(shared, embedder, &todo)?;
        if let Some(last) = page.last() {
            advance(shared, last.meta.pk);
        }
    }
}

/// Loads stored vectors of, or embeds, one batch of episodes and adds them to the index.
fn process(shared: &Shared, embedder: &Embedder, batch: &[&QueuedEpisode]) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let model = embedder.model_id();
    // Rotation events are bookkeeping: as search results they would only echo the session's
    // name, so they are neither embedded nor indexed (and take no candidate slot).
    let (stored, mut fresh): (Vec<&QueuedEpisode>, Vec<&QueuedEpisode>) = batch
        .iter()
        .filter(|q| !q.meta.rotation)
        .partition(|q| q.has_vectors);
    if !stored.is_empty() {
        let ids: Vec<&str> = stored.iter().map(|q| q.meta.id.as_str()).collect();
        let mut vectors = shared.store.vectors_of(&shared.workspace_id, model, &ids)?;
        for queued in stored {
            // Stored vectors the index refuses (another width, a non-finite value: a bug or a
            // damaged file) are embedded again and replaced, rather than left out for good.
            let indexed = vectors
                .remove(&queued.meta.id)
                .is_some_and(|windows| add_to_index(shared, &queued.meta, &windows));
            if !indexed {
                fresh.push(queued);
            }
        }
    }
    if fresh.is_empty() {
        return Ok(());
    }
    yield_to_queries(shared);
    let pks: Vec<i64> = fresh.iter().map(|q| q.meta.pk).collect();
    let texts = shared.store.episode_texts(&shared.workspace_id, &pks)?;
    let mut embedded: Vec<(&EpisodeMeta, Vec<Vec<f32>>)> = Vec::with_capacity(fresh.len());
    let inputs: Vec<(&EpisodeMeta, EpisodeText<'_>)> = fresh
        .iter()
        .filter_map(|q| {
            texts
                .get(&q.meta.pk)
                .map(|(summary, content)| (&q.meta, EpisodeText { summary, content }))
        })
        .collect();
    let all: Vec<EpisodeText<'_>> = inputs.iter().map(|(_, t)| *t).collect();
    match embed(embedder, &all) {
        Some(vectors) => embedded.extend(inputs.iter().map(|(m, _)| *m).zip(vectors)),
        // One bad text must not cost the others: retry one by one and give up on the failures.
        None => {
            for (meta, text) in &inputs {
                match embed(embedder, std::slice::from_ref(text)).and_then(|mut v| v.pop()) {
                    Some(windows) => embedded.push((meta, windows)),
                    None => note_failure(shared, &meta.id),
                }
            }
        }
    }
    if embedded.is_empty() {
        return Ok(());
    }
    let batch: Vec<(i64, &str, Vec<Vec<f32>>)> = embedded
        .iter()
        .map(|(meta, windows)| (meta.pk, meta.id.as_str(), windows.clone()))
        .collect();
    // Episodes deleted while they were embedded are skipped, and stay out of the index.
    let written = shared.store.put_vectors_at(model, &batch)?;
    for (meta, windows) in &embedded {
        if written.contains(&meta.pk) {
            add_to_index(shared, meta, windows);
        }
    }
    Ok(())
}

/// Counts an episode the model failed on, keeping one up-to-date warning about all of them
/// rather than one per failure.
fn note_failure(shared: &Shared, episode_id: &str) {
    let mut state = shared.lock();
    state.failed += 1;
    let failed = state.failed;
    state.warnings.retain(|w| !w.starts_with(FAILURE_WARNING));
    state.warnings.push(format!(
        "{FAILURE_WARNING}{failed} episode(s) (latest {episode_id}); they are found by BM25, \
         recency and paths only"
    ));
}

/// The episodes' window vectors, or `None` when the model fails or panics on them.
fn embed(embedder: &Embedder, texts: &[EpisodeText<'_>]) -> Option<Vec<Vec<Vec<f32>>>> {
    match catch_unwind(AssertUnwindSafe(|| embedder.embed_episodes(texts))) {
        Ok(Ok(vectors)) if vectors.len() == texts.len() => Some(vectors),
        _ => None,
    }
}

/// Waits, at most [`MAX_YIELD`], while a recall is running.
fn yield_to_queries(shared: &Shared) {
    let started = Instant::now();
    while shared.active_queries.load(Ordering::Acquire) > 0 && started.elapsed() < MAX_YIELD {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Deletes the vectors of other models nobody has used within `keep_other_models`, once this
/// model covers the workspace (episodes the model failed on have no use for them either), a few
/// thousand per transaction so recording is never held up for long. Returns `true` when there
/// is nothing left to do.
fn drop_old_models(shared: &Shared, model: &str) -> bool {
    let keep = chrono::Duration::from_std(shared.config.keep_other_models)
        .unwrap_or(chrono::Duration::MAX);
    let used_since = Utc::now()
        .checked_sub_signed(keep)
        .unwrap_or(DateTime::<Utc>::MIN_UTC);
    loop {
        if shared.stopping() {
            return false;
        }
        match shared
            .store
            .drop_stale_vectors(&shared.workspace_id, model, used_since, DROP_CHUNK)
        {
            Ok(0) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
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
