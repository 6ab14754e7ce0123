//! Shell-output compression: `compress` (pure, nothing stored) and `run` (runs a command in the
//! workspace, stores its raw output as an episode first, returns the compressed text with the
//! `get_episode` hint). Result classes: `Compressed`, `RunOutput`.

use codeoid_core::MemoryConfig;
use codeoid_core::compress::{Compressed as CoreCompressed, RunOutput as CoreRunOutput};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

use crate::boundary::{detached, until_signal};
use crate::convert;
use crate::memory::PyMemory;
use crate::repr;

/// A command's stdout as compressed by one rule.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct Compressed {
    /// The compressed text (without the hint line); ends with a newline.
    pub text: String,
    /// The rule that produced it (`"git_diff"`, `"test_runner"`, `"ls"`...).
    pub rule: String,
    /// Size of the raw stdout in bytes.
    pub bytes_in: usize,
    /// Size of `text` in bytes.
    pub bytes_out: usize,
    /// `bytes_out / bytes_in`.
    pub kept_ratio: f64,
}

impl From<CoreCompressed> for Compressed {
    fn from(c: CoreCompressed) -> Compressed {
        Compressed {
            text: c.text,
            rule: c.rule,
            bytes_in: c.bytes_in,
            bytes_out: c.bytes_out,
            kept_ratio: c.kept_ratio,
        }
    }
}

#[pymethods]
impl Compressed {
    /// The line that tells a reader how to get the raw output back from episode `episode_id`.
    fn hint(&self, episode_id: &str) -> String {
        let core = CoreCompressed {
            text: String::new(),
            rule: self.rule.clone(),
            bytes_in: self.bytes_in,
            bytes_out: self.bytes_out,
            kept_ratio: self.kept_ratio,
        };
        core.hint(episode_id)
    }

    fn __repr__(&self) -> String {
        repr::fields(
            "Compressed",
            &[
                ("rule", &self.rule),
                ("bytes_in", &self.bytes_in),
                ("bytes_out", &self.bytes_out),
            ],
        )
    }
}

/// What `Memory.run` produced.
#[pyclass(frozen, module = "codeoid")]
pub struct RunOutput {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit_code: i32,
    episode_id: Option<String>,
    compressed: Option<Compressed>,
    store_error: Option<String>,
    timed_out: bool,
    left_running: bool,
}

impl From<CoreRunOutput> for RunOutput {
    fn from(o: CoreRunOutput) -> RunOutput {
        RunOutput {
            stdout: o.stdout,
            stderr: o.stderr,
            exit_code: o.exit_code,
            episode_id: o.episode_id,
            compressed: o.compressed.map(Compressed::from),
            store_error: o.store_error.map(|e| e.full_message()),
            timed_out: o.timed_out,
            left_running: o.left_running,
        }
    }
}

#[pymethods]
impl RunOutput {
    /// What to show: the compressed text followed by the hint, or the raw bytes.
    #[getter]
    fn stdout<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.stdout)
    }

    /// The command's stderr, unchanged (never compressed).
    #[getter]
    fn stderr<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.stderr)
    }

    /// The exit code (`128 + signal` when a signal ended the command).
    #[getter]
    fn exit_code(&self) -> i32 {
        self.exit_code
    }

    /// The episode holding the raw stdout and stderr, if storing succeeded.
    #[getter]
    fn episode_id(&self) -> Option<String> {
        self.episode_id.clone()
    }

    /// The compression applied, if any.
    #[getter]
    fn compressed(&self) -> Option<Compressed> {
        self.compressed.clone()
    }

    /// Why the raw output could not be stored (stdout is then raw).
    #[getter]
    fn store_error(&self) -> Option<String> {
        self.store_error.clone()
    }

    /// Whether the command ran past its timeout (the memory's `run_timeout`, or the call's
    /// `timeout`) and was killed, with everything it started (`stdout` then ends with a line
    /// saying so).
    #[getter]
    fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// Whether a process the command started in the background (`server &`) still held its
    /// output when the command ended: it was left running, `stdout` ends with a line saying so,
    /// and what it printed once the output stayed quiet 0.2 s after the command's exit is not
    /// here.
    #[getter]
    fn left_running(&self) -> bool {
        self.left_running
    }

    fn __repr__(&self) -> String {
        repr::fields(
            "RunOutput",
            &[
                ("exit_code", &self.exit_code),
                ("episode_id", &self.episode_id),
                ("stdout_len", &self.stdout.len()),
            ],
        )
    }
}

/// Raw output given as `bytes`, `bytearray` or `str`.
fn output_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(bytes) = obj.cast::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    if let Ok(array) = obj.cast::<PyByteArray>() {
        return Ok(array.to_vec());
    }
    if let Ok(text) = obj.cast::<PyString>() {
        return Ok(convert::text(text, "stdout")?.into_bytes());
    }
    Err(PyTypeError::new_err(format!(
        "stdout is {}; expected bytes or str",
        convert::type_name(obj)
    )))
}

#[pymethods]
impl PyMemory {
    /// Compresses `stdout` (bytes or str) of `command` with the configured rules; `None` when no
    /// rule saves enough (show the output as is). Pure: nothing is stored; use `run` to keep the
    /// raw bytes reachable through `get_episode`.
    fn compress(
        &self,
        py: Python<'_>,
        command: String,
        stdout: Bound<'_, PyAny>,
    ) -> PyResult<Option<Compressed>> {
        let memory = self.get(py)?;
        let stdout = output_bytes(&stdout)?;
        let compressed = detached(py, move || Ok(memory.compress(&command, &stdout)))?;
        Ok(compressed.map(Compressed::from))
    }

    /// Runs `command` with `sh -c` in the workspace root (stdin closed), stores its raw stdout
    /// and stderr as an episode of session `session_id` first, then returns the compressed
    /// stdout ending with the `get_episode` hint. A failing command is not an error: see
    /// `RunOutput.exit_code`. `timeout` (seconds, 0 for none) replaces the memory's
    /// `run_timeout` for this call; a command past it is killed with everything it started.
    /// Called on the main thread, the command runs in a process group of its own and a Ctrl-C
    /// reaches it within about 0.1 s (SIGINT, then SIGKILL for what is left a second later);
    /// what it printed is stored, then `KeyboardInterrupt` is raised.
    #[pyo3(signature = (session_id, command, *, timeout = None))]
    fn run(
        &self,
        py: Python<'_>,
        session_id: String,
        command: String,
        timeout: Option<f64>,
    ) -> PyResult<RunOutput> {
        let memory = self.get(py)?;
        // Only the main thread sees Ctrl-C; elsewhere the command stays reachable by the
        // terminal's own (without a timeout it shares the terminal's process group).
        let catches_signals = on_main_thread(py);
        let mut raised: Option<PyErr> = None;
        let output = {
            let raised = &mut raised;
            detached(py, move || {
                let timeout = match timeout {
                    Some(secs) => MemoryConfig::run_timeout_from_secs(secs, "timeout")?,
                    None => memory.config().run_timeout,
                };
                if !catches_signals {
                    return memory.run_with_timeout(&session_id, &command, timeout);
                }
                let mut keep_going = until_signal(raised);
                memory.run_with_timeout_while(&session_id, &command, timeout, &mut keep_going)
            })?
        };
        match raised {
            Some(err) => Err(err),
            None => Ok(RunOutput::from(output)),
        }
    }
}

/// Whether this is Python's main thread, the one its signal handlers (Ctrl-C) run on.
fn on_main_thread(py: Python<'_>) -> bool {
    let check = || -> PyResult<bool> {
        let threading = py.import("threading")?;
        let main = threading.call_method0("main_thread")?;
        Ok(main.is(&threading.call_method0("current_thread")?))
    };
    check().unwrap_or(false)
}
