//! `codeoid.Memory`: the Python face of the core's `Memory`, one store bound to one workspace.
//!
//! This file holds the class itself: opening (with the settings a harness may want to pass as
//! keywords), `close()` and the context-manager protocol, and the properties. The methods of each
//! area live beside it in their own files (`sessions`, `record`, `reads`, `rotation`,
//! `compress`), each with its own `#[pymethods]` block.
//!
//! Threads: the class is frozen and `Sync`. Each call clones the `Arc` of the core `Memory` under
//! a short read lock and then works with the GIL released, so calls from several threads run in
//! parallel. `close()` takes the `Arc` out: calls already running finish on their own clone, and
//! the store closes when the last one returns. Any call after `close()` raises
//! `InvalidInputError` (a `ValueError`, as a closed Python file does), never crashes.

use codeoid_core::retrieve::ModelChoice;
use codeoid_core::store::StoreOptions;
use codeoid_core::{Memory, MemoryConfig};
use pyo3::prelude::*;
use pyo3::types::PyType;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use crate::boundary::detached;
use crate::convert::Count;
use crate::errors;
use crate::recall;
use crate::repr::Repr;

/// Session memory for one workspace: the store of every turn, read back by recall, timeline and
/// the memory tools.
///
/// `Memory(path=None, workspace=None, **settings)` opens (creating it when missing) the store at
/// `path` (default: `$CODEOID_DB` or the platform data directory, as the `codeoid` CLI; the
/// string ":memory:" for a private in-memory store) and binds it to the workspace containing the
/// directory `workspace` (default: the current directory). Settings not given come from the
/// `CODEOID_*` environment variables when `env` is true, else from the documented defaults.
///
/// Recall ranks with an embedding model, loaded (or downloaded) by a background thread and
/// found as the CLI finds it: `CODEOID_MODEL_DIR`, the Hugging Face cache, then a download.
/// `model_dir` names a checkpoint directory instead; `embeddings=False` turns the model off
/// (recall ranks by words, recency and paths). `read_only=True` opens an existing store for
/// reading only (read-only media or mount, another user's file): every write then raises.
///
/// Use it as a context manager, or call `close()`; any method called after `close()` raises
/// `InvalidInputError`. Safe to share between threads: calls release the GIL.
#[pyclass(frozen, module = "codeoid", name = "Memory")]
pub struct PyMemory {
    inner: RwLock<Option<Arc<Memory>>>,
}

impl PyMemory {
    /// The open core memory, or the error of a closed one.
    pub(crate) fn get(&self, py: Python<'_>) -> PyResult<Arc<Memory>> {
        let guard = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        match guard.as_ref() {
            Some(memory) => Ok(Arc::clone(memory)),
            None => Err(errors::invalid_input(
                py,
                "this codeoid.Memory is closed; open a new codeoid.Memory to keep working",
            )),
        }
    }
}

#[pymethods]
impl PyMemory {
    #[new]
    #[pyo3(signature = (
        path = None,
        workspace = None,
        *,
        tenant = None,
        memory_enabled = None,
        auto_rotate = None,
        soft_threshold = None,
        hard_threshold = None,
        min_turns = None,
        context_window = None,
        workspace_index = None,
        compress_rules = None,
        run_timeout = None,
        hash_read_files = None,
        max_episode_bytes = None,
        busy_timeout = None,
        read_only = None,
        embeddings = None,
        model_dir = None,
        env = true,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: Option<PathBuf>,
        workspace: Option<PathBuf>,
        tenant: Option<String>,
        memory_enabled: Option<bool>,
        auto_rotate: Option<bool>,
        soft_threshold: Option<f64>,
        hard_threshold: Option<f64>,
        min_turns: Option<Count>,
        context_window: Option<Count>,
        workspace_index: Option<bool>,
        compress_rules: Option<PathBuf>,
        run_timeout: Option<f64>,
        hash_read_files: Option<bool>,
        max_episode_bytes: Option<Count>,
        busy_timeout: Option<f64>,
        read_only: Option<bool>,
        embeddings: Option<bool>,
        model_dir: Option<PathBuf>,
        env: bool,
    ) -> PyResult<PyMemory> {
        let busy_timeout = busy_timeout
            .map(|secs| recall::seconds(py, secs, "busy_timeout"))
            .transpose()?;
        let run_timeout = run_timeout
            .map(|secs| {
                MemoryConfig::run_timeout_from_secs(secs, "run_timeout")
                    .map_err(|e| errors::to_py(py, &e))
            })
            .transpose()?;
        let model = match (embeddings, model_dir) {
            (Some(false), Some(dir)) => {
                return Err(errors::invalid_input(
                    py,
                    format!(
                        "embeddings=False turns the model off, but model_dir={} names one; pass \
                         one or the other",
                        dir.display().to_string().repr()
                    ),
                ));
            }
            (_, Some(dir)) => Some(ModelChoice::Dir(dir)),
            (Some(false), None) => Some(ModelChoice::Disabled),
            (Some(true), None) => Some(ModelChoice::Auto),
            (None, None) => None,
        };
        let min_turns = min_turns.map(|n| n.to_u32(py, "min_turns")).transpose()?;
        let context_window = context_window.map(|n| n.0);
        let max_episode_bytes = max_episode_bytes
            .map(|n| n.to_usize(py, "max_episode_bytes"))
            .transpose()?;
        let memory = detached(py, move || {
            let mut config = if env {
                MemoryConfig::from_env()?
            } else {
                MemoryConfig::default()
            };
            config.workspace_dir = workspace;
            if let Some(tenant) = tenant {
                config.tenant = tenant;
            }
            if let Some(enabled) = memory_enabled {
                config.memory_enabled = enabled;
            }
            if let Some(auto) = auto_rotate {
                config.rotation.auto_rotate = auto;
            }
            if let Some(soft) = soft_threshold {
                config.rotation.soft_threshold = soft;
            }
            if let Some(hard) = hard_threshold {
                config.rotation.hard_threshold = hard;
            }
            if let Some(turns) = min_turns {
                config.rotation.min_turns = turns;
            }
            if context_window.is_some() {
                config.rotation.window_override = context_window;
            }
            if let Some(enabled) = workspace_index {
                config.index.enabled = enabled;
            }
            if compress_rules.is_some() {
                config.compress_rules = compress_rules;
            }
            if let Some(timeout) = run_timeout {
                config.run_timeout = timeout;
            }
            if let Some(model) = model {
                config.embedding.model = model;
            }
            let mut options = StoreOptions::default();
            if let Some(hash) = hash_read_files {
                options.hash_read_files = hash;
            }
            if let Some(bytes) = max_episode_bytes {
                options.max_episode_bytes = bytes;
            }
            if let Some(timeout) = busy_timeout {
                options.busy_timeout = timeout;
            }
            if let Some(read_only) = read_only {
                options.read_only = read_only;
            }
            config.db_path = path;
            config.store = options;
            Memory::open(config)
        })?;
        Ok(PyMemory {
            inner: RwLock::new(Some(Arc::new(memory))),
        })
    }

    /// Closes the store. Calls already running on other threads finish first; later calls raise
    /// `InvalidInputError`. Closing twice is a no-op.
    fn close(&self, py: Python<'_>) {
        let taken = self
            .inner
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        // Dropping the last reference joins the checkpoint thread and closes SQLite: not
        // something to do while holding the GIL.
        py.detach(move || drop(taken));
    }

    /// `True` once `close()` has been called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }

    fn __enter__(slf: Py<Self>, py: Python<'_>) -> PyResult<Py<Self>> {
        // A closed memory raises here as every other method does.
        slf.borrow(py).get(py)?;
        Ok(slf)
    }

    #[pyo3(signature = (exc_type = None, exc_value = None, traceback = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<Bound<'_, PyType>>,
        exc_value: Option<Bound<'_, PyAny>>,
        traceback: Option<Bound<'_, PyAny>>,
    ) -> bool {
        let _ = (exc_type, exc_value, traceback);
        self.close(py);
        false
    }

    /// The store file, or `None` for an in-memory store.
    #[getter]
    fn path(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let memory = self.get(py)?;
        Ok(memory
            .store()
            .path()
            .map(|p| p.to_string_lossy().into_owned()))
    }

    /// The workspace id (`ws_` + 16 hex digits) every read is scoped to.
    #[getter]
    fn workspace_id(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.get(py)?.workspace().id().to_string())
    }

    /// The workspace's root directory (a git checkout's top level, or the directory itself).
    #[getter]
    fn workspace_root(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self
            .get(py)?
            .workspace()
            .root()
            .to_string_lossy()
            .into_owned())
    }

    /// The workspace's short name: its root directory's name.
    #[getter]
    fn workspace_name(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.get(py)?.workspace_name().to_string())
    }

    /// The tenant mixed into the workspace id.
    #[getter]
    fn tenant(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.get(py)?.workspace().tenant().to_string())
    }

    fn __repr__(&self) -> String {
        let guard = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        match guard.as_ref() {
            None => "<codeoid.Memory closed>".to_string(),
            Some(memory) => {
                let path = memory.store().path().map_or_else(
                    || codeoid_core::store::IN_MEMORY.to_string(),
                    |p| p.display().to_string(),
                );
                format!(
                    "<codeoid.Memory path={} workspace={}>",
                    path.repr(),
                    memory.workspace().id().repr()
                )
            }
        }
    }
}
