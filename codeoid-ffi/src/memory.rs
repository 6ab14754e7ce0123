//! `codeoid_memory`: the handle a harness holds, wrapping [`codeoid_core::Memory`] (one store
//! bound to one workspace). Opened from a JSON config, destroyed with `codeoid_memory_free`.
//!
//! A `codeoid_memory` is thread-safe: any number of threads may call functions on one handle at
//! once (the core serializes writes and pools readers). Only `codeoid_memory_free` must not race
//! with other calls on the same handle; using a freed handle is undefined behaviour.

use std::ffi::c_char;
use std::path::PathBuf;
use std::time::Duration;

use codeoid_core::embed::ModelLocator;
use codeoid_core::retrieve::ModelChoice;
use codeoid_core::{Memory, MemoryConfig};
use serde::Deserialize;
use serde_json::Value;

use crate::args::{optional_text, out, parse_optional_json};
use crate::error::{Failure, FfiResult, codeoid_error};
use crate::json::overlay;
use crate::panic::{boundary, quiet};

/// Session memory for one workspace: an open store bound to a workspace. Opaque; create it with
/// `codeoid_memory_open`, destroy it with `codeoid_memory_free`.
pub struct codeoid_memory {
    pub(crate) inner: Memory,
}

impl codeoid_memory {
    /// The wrapped memory, for Rust callers (benches compare the two paths).
    pub fn memory(&self) -> &Memory {
        &self.inner
    }
}

/// The JSON config of `codeoid_memory_open`; every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenConfig {
    /// Start from the `CODEOID_*` environment variables instead of the built-in defaults.
    #[serde(default)]
    from_env: bool,
    db_path: Option<PathBuf>,
    workspace_dir: Option<PathBuf>,
    tenant: Option<String>,
    memory_enabled: Option<bool>,
    compress_rules: Option<PathBuf>,
    run_timeout_secs: Option<f64>,
    /// Hash the files a live session reads right after `record_turn` commits (default on).
    hash_live_reads: Option<bool>,
    rotation: Option<Value>,
    index: Option<Value>,
    store: Option<StoreSettings>,
    embeddings: Option<EmbeddingSettings>,
}

/// The store settings a caller may change.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreSettings {
    busy_timeout_ms: Option<u64>,
    max_episode_bytes: Option<usize>,
    hash_read_files: Option<bool>,
    include_thinking: Option<bool>,
    read_only: Option<bool>,
}

/// Which embedding model recall uses; every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EmbeddingSettings {
    /// `false`: no model, recall is lexical (BM25, recency, paths) and no worker thread runs.
    enabled: Option<bool>,
    /// A sentence-transformers checkpoint directory, used instead of the automatic search.
    model_dir: Option<PathBuf>,
    /// `false`: use a model only if one is found locally; never download one.
    download: Option<bool>,
}

impl EmbeddingSettings {
    /// The model choice these settings make, or `None` to keep the base config's.
    fn model(self) -> FfiResult<Option<ModelChoice>> {
        let contradiction = |what: &str| {
            Failure::invalid_input(format!(
                "`embeddings` has `enabled: false` and {what}; drop one of them"
            ))
        };
        if self.enabled == Some(false) {
            if self.model_dir.is_some() {
                return Err(contradiction("a `model_dir`"));
            }
            if self.download == Some(true) {
                return Err(contradiction("`download: true`"));
            }
            return Ok(Some(ModelChoice::Disabled));
        }
        if let Some(dir) = self.model_dir {
            if self.download == Some(true) {
                return Err(Failure::invalid_input(
                    "`embeddings` has a `model_dir` and `download: true`; a model directory is \
                     never downloaded into, drop `download`",
                ));
            }
            return Ok(Some(ModelChoice::Dir(dir)));
        }
        Ok(match (self.enabled, self.download) {
            (_, Some(false)) => Some(ModelChoice::Locate(ModelLocator {
                download: None,
                ..ModelLocator::from_env()
            })),
            (Some(true), _) | (_, Some(true)) => Some(ModelChoice::Auto),
            _ => None,
        })
    }
}

impl OpenConfig {
    fn into_memory_config(self) -> FfiResult<MemoryConfig> {
        let mut config = if self.from_env {
            MemoryConfig::from_env()?
        } else {
            MemoryConfig::default()
        };
        if self.db_path.is_some() {
            config.db_path = self.db_path;
        }
        if self.workspace_dir.is_some() {
            config.workspace_dir = self.workspace_dir;
        }
        if let Some(tenant) = self.tenant {
            config.tenant = tenant;
        }
        if let Some(enabled) = self.memory_enabled {
            config.memory_enabled = enabled;
        }
        if self.compress_rules.is_some() {
            config.compress_rules = self.compress_rules;
        }
        if let Some(secs) = self.run_timeout_secs {
            config.run_timeout = MemoryConfig::run_timeout_from_secs(secs, "run_timeout_secs")?;
        }
        if let Some(hash) = self.hash_live_reads {
            config.hash_live_reads = hash;
        }
        if let Some(model) = self
            .embeddings
            .map(EmbeddingSettings::model)
            .transpose()?
            .flatten()
        {
            config.embedding.model = model;
        }
        config.rotation = overlay(&config.rotation, self.rotation.as_ref(), "rotation")?;
        config.index = overlay(&config.index, self.index.as_ref(), "index")?;
        if let Some(store) = self.store {
            if let Some(ms) = store.busy_timeout_ms {
                config.store.busy_timeout = Duration::from_millis(ms);
            }
            if let Some(bytes) = store.max_episode_bytes {
                config.store.max_episode_bytes = bytes;
            }
            if let Some(hash) = store.hash_read_files {
                config.store.hash_read_files = hash;
            }
            if let Some(thinking) = store.include_thinking {
                config.store.chunker.include_thinking = thinking;
            }
            if let Some(read_only) = store.read_only {
                config.store.read_only = read_only;
            }
        }
        Ok(config)
    }
}

/// Opens (creating if needed) the store and binds it to a workspace.
///
/// `config_json` (optional: NULL means all defaults) is a JSON object, every key optional:
/// `db_path` (default `$CODEOID_DB` or the platform data directory), `workspace_dir` (a directory
/// inside the workspace; default the current directory), `tenant`, `memory_enabled`,
/// `compress_rules` (a rule file), `run_timeout_secs` (commands run by `codeoid_memory_run` are
/// killed after this many seconds; 0 or absent: never), `hash_live_reads` (default true: right
/// after `codeoid_memory_record_turn` or `_record_message` commits, hash the files under the
/// workspace root that the turn read, so `recall_file` can tell whether they changed since;
/// false opens no file), `rotation` and `index` (objects of settings to change, named as in
/// `docs/rotation.md` and `docs/workspace-index.md`), `store` (`busy_timeout_ms`,
/// `max_episode_bytes`, `hash_read_files` (default false: hash read files inside the write
/// that records them, bulk recording and imports included), `include_thinking`, `read_only`
/// (default false: open an existing store for reading only, every write then fails with
/// `CODEOID_ERROR_IO`; see `docs/store.md`)), `embeddings`
/// (the model recall uses: `enabled` (false: lexical recall, no worker thread), `model_dir` (a
/// checkpoint directory), `download` (false: never download a model)), and `from_env` (start
/// from the `CODEOID_*` environment variables instead of the defaults). Unknown keys are an
/// error.
///
/// By default the embedding model is found automatically (`CODEOID_MODEL_DIR`, then the Hugging
/// Face cache, then a download on a background thread; never in this call). Opening never fails
/// for want of a model: recall is then lexical and `codeoid_memory_warnings` says why.
///
/// On success `*out_memory` receives a new handle to free with `codeoid_memory_free`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT` (`out_memory`), `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (bad JSON or setting), `CODEOID_ERROR_NOT_FOUND` (the
/// workspace directory does not exist), `CODEOID_ERROR_IO`, `CODEOID_ERROR_CORRUPT`,
/// `CODEOID_ERROR_SCHEMA_TOO_NEW`, `CODEOID_ERROR_DATABASE`.
///
/// Thread-safe.
///
/// # Safety
/// `config_json` is NULL or points at `config_json_len` readable bytes; `out_memory` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_open(
    config_json: *const c_char,
    config_json_len: usize,
    out_memory: *mut *mut codeoid_memory,
) -> *mut codeoid_error {
    boundary("codeoid_memory_open", || {
        // SAFETY: the caller guarantees the buffer and the out-parameter.
        let json = unsafe { optional_text(config_json, config_json_len, "config_json") }?;
        // SAFETY: as above.
        let out_memory = unsafe { out(out_memory, "out_memory") }?;
        let config: OpenConfig =
            parse_optional_json(json, "config_json", "a memory config object")?;
        let inner = Memory::open(config.into_memory_config()?)?;
        *out_memory = Box::into_raw(Box::new(codeoid_memory { inner }));
        Ok(())
    })
}

/// Closes the store and destroys `memory`. `codeoid_memory_free(NULL)` does nothing.
///
/// Stops the background embedding worker and joins its thread (it finishes the batch it is
/// embedding, typically well under a second), so no thread of this handle outlives the call. The
/// one exception is a model download in progress, which cannot be interrupted: that thread exits
/// on its own, without touching the store, once the download ends.
///
/// Must not run while another thread is still calling functions on `memory`; using the handle
/// after this call is undefined behaviour.
///
/// # Safety
/// `memory` is NULL or a handle from `codeoid_memory_open` that was not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_free(memory: *mut codeoid_memory) {
    quiet((), || {
        if !memory.is_null() {
            // SAFETY: a non-NULL handle came from Box::into_raw in codeoid_memory_open and the
            // caller guarantees it was not freed yet.
            drop(unsafe { Box::from_raw(memory) });
        }
    });
}

/// Writes a JSON object describing the workspace `memory` is bound to into `*out_json`:
/// `{"workspace_id", "name", "root", "db_path"}`.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `out_json` is NULL or points at a `codeoid_string` that
/// owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_workspace(
    memory: *const codeoid_memory,
    out_json: *mut crate::strings::codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_workspace", || {
        // SAFETY: the caller guarantees a live handle or NULL.
        let memory = unsafe { crate::args::handle(memory, "memory") }?;
        // SAFETY: the caller guarantees the out-parameter.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let m = &memory.inner;
        let value = serde_json::json!({
            "workspace_id": m.workspace().id(),
            "name": m.workspace_name(),
            "root": m.workspace().root().to_string_lossy(),
            "db_path": m.store().path().map(|p| p.to_string_lossy().into_owned()),
        });
        crate::json::write(out_json, &value)
    })
}
