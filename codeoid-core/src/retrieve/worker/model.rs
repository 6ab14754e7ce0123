//! The worker's model: finding (or downloading) the checkpoint its configuration names, with
//! the download's progress in the worker's status, and loading it once per process however many
//! workspaces use it.
//!
//! Invariants: a model that cannot be found or loaded leaves the worker `Unavailable` with a
//! warning saying why and that recall works lexically meanwhile; the download callback holds the
//! worker's state weakly, so a download never keeps a dropped worker alive.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use super::{EmbeddingPhase, Shared, lexical_warning};
use crate::embed::{DownloadProgress, Embedder, ModelLocator, ProgressFn, ResolvedModel};
use crate::error::Result;

/// Whether `locator` would download the model when it is not on disk (no directory was given,
/// and a hub and a cache are configured).
pub(super) fn can_download(locator: &ModelLocator) -> bool {
    locator.explicit_dir.is_none()
        && locator.env_dir.is_none()
        && locator.download.is_some()
        && locator.hf_cache.is_some()
}

/// Resolves the worker's model (a download's progress shows in its status) and loads it, in
/// phase `Loading`; `None` when it is unavailable (the phase and warning say why) or the worker
/// is stopping.
pub(super) fn acquire(shared: &Arc<Shared>, locator: &ModelLocator) -> Option<Arc<Embedder>> {
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
            return None;
        }
    };
    if shared.stopping() {
        return None;
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
            return None;
        }
    };
    Some(embedder)
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
