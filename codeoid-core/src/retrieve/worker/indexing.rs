//! The worker's indexing pass: walking the workspace's episodes in key order from the cursor,
//! loading the vectors the store already has for the model or embedding the episodes that have
//! none (in small batches, yielding to running queries), storing them and keeping the in-memory
//! index current; dropping from it the episodes a tail replacement deleted; and, once the model
//! covers the workspace, deleting the vectors of models no worker uses any more.
//!
//! Invariants: the cursor only passes an episode once it is in the index or given up on (see
//! the parent module); vectors are written by key and id, so an episode replaced while it was
//! embedded never receives its predecessor's vectors; rotation events and the model's own
//! memory-tool calls (see [`bookkeeping`]) are neither embedded nor indexed.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::{FAILURE_WARNING, Shared};
use crate::canonical::tool_input::memory_tool;
use crate::embed::{Embedder, EpisodeText};
use crate::error::Result;
use crate::retrieve::vector_index::{EntryMeta, VectorIndex};
use crate::store::{EpisodeMeta, QueuedEpisode};

/// Episodes read from the queue per round trip.
const QUEUE_PAGE: usize = 256;

/// Old-model vectors deleted per transaction.
const DROP_CHUNK: usize = 4096;

/// Longest a batch waits for running queries before it goes ahead anyway.
const MAX_YIELD: Duration = Duration::from_millis(500);

/// `true` for an episode recall never returns, so it is neither embedded nor indexed: a
/// rotation event (bookkeeping: as a hit it would only echo the session's name) or a call of
/// one of codeoid's memory tools (a recorded `recall` holds copies of the episodes it found;
/// as a hit it would repeat them, nested).
fn bookkeeping(meta: &EpisodeMeta) -> bool {
    meta.rotation || meta.tool_name.as_deref().and_then(memory_tool).is_some()
}

/// The index of every vector the store already has for this model.
pub(super) fn load_index(shared: &Shared, embedder: &Embedder) -> Result<VectorIndex> {
    let mut index = VectorIndex::new(embedder.dim());
    let mut current: Option<EpisodeMeta> = None;
    let mut windows: Vec<Vec<f32>> = Vec::new();
    let flush = |meta: &EpisodeMeta, windows: &mut Vec<Vec<f32>>, index: &mut VectorIndex| {
        // Rotation events and memory-tool calls embedded by an earlier version stay out.
        if bookkeeping(meta) {
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

/// Drops from the index the episodes the store no longer holds (a tail replacement, here or in
/// another process, deleted them), when the store's count of deleted episodes has moved since
/// the last time. Runs on the worker thread, the index's only writer, so nothing is added
/// between listing the store's keys and removing the missing ones.
pub(super) fn prune_deleted(shared: &Shared) -> Result<()> {
    let now = shared.store.episodes_deleted()?;
    if now == shared.lock().deletions_seen {
        return Ok(());
    }
    let live = shared.store.episode_keys(&shared.workspace_id)?;
    {
        let mut guard = shared.index.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(index) = guard.as_mut() {
            let gone: Vec<i64> = index.keys().filter(|pk| !live.contains(pk)).collect();
            for pk in gone {
                index.remove(pk);
            }
        }
    }
    shared.lock().deletions_seen = now;
    shared.changed.notify_all();
    Ok(())
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
pub(super) fn drain(shared: &Shared, embedder: &Embedder) -> Result<()> {
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
    // Bookkeeping is neither embedded nor indexed (and takes no candidate slot).
    let (stored, mut fresh): (Vec<&QueuedEpisode>, Vec<&QueuedEpisode>) = batch
        .iter()
        .filter(|q| !bookkeeping(&q.meta))
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
    // Episodes deleted while they were embedded are skipped, and stay out of the index. A store
    // opened read-only keeps no vectors: they live in this process's index only.
    let written: HashSet<i64> = if shared.store.is_read_only() {
        batch.iter().map(|(pk, ..)| *pk).collect()
    } else {
        shared.store.put_vectors_at(model, &batch)?
    };
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

/// The episodes' window vectors, or `None` when the model fails or panics on them, or gives a
/// value that is not finite (a checkpoint with broken weights): such a vector would be refused
/// by the store for the whole batch, over and over, and hold every later episode back.
fn embed(embedder: &Embedder, texts: &[EpisodeText<'_>]) -> Option<Vec<Vec<Vec<f32>>>> {
    match catch_unwind(AssertUnwindSafe(|| embedder.embed_episodes(texts))) {
        Ok(Ok(vectors))
            if vectors.len() == texts.len()
                && vectors.iter().flatten().flatten().all(|x| x.is_finite()) =>
        {
            Some(vectors)
        }
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
pub(super) fn drop_old_models(shared: &Shared, model: &str) -> bool {
    if shared.store.is_read_only() {
        return true;
    }
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
