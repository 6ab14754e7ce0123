//! Running a command with reversible compression: store the raw output first, then compress.
//!
//! [`Runner::run`] executes a command line with `sh -c`, captures stdout and stderr separately
//! (read concurrently, so neither pipe can fill up and stall the command) and its exit code, and
//! hands all three to a [`RawOutputSink`] before anything else happens. Only then is stdout
//! compressed, and the hint names the episode id the sink returned, so what the model reads can
//! always be traded back for the exact bytes.
//!
//! Invariants:
//! - stderr and the exit code are returned exactly as the command produced them;
//! - if the sink fails, stdout is returned raw and the failure is reported in
//!   [`RunOutput::store_error`]: the command has already run, so its output must not be lost;
//! - stdin is inherited by default (so `… | codeoid run -- cmd` works); [`Stdin::Null`] closes it
//!   for callers with no input to give;
//! - a command killed by a signal reports `128 + signal`, as shells do.
//!
//! With [`Runner::timeout`], a command still running at the deadline is killed with its whole
//! process group (it runs in one of its own, so `sh -c` does not leave its children behind);
//! what it printed until then is stored and shown, and [`RunOutput::timed_out`] says so. Without
//! one the runner waits as long as the command runs. [`Runner::run_while`] also asks its caller,
//! about every 0.1 s, whether to go on, and when told to stop passes a Ctrl-C on to the group
//! (`SIGINT`, then `SIGKILL` for what is left; see `child`). It does not stream: output is shown
//! when the command ends. A process the command leaves running in the background (`server &`)
//! holds the pipes after the command exited: on Unix the runner then returns all the command
//! wrote and whatever followed until the pipes went quiet, and leaves that process running
//! ([`RunOutput::left_running`]; see `capture`).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use super::capture::Capture;
use super::child::{self, Killed};
use super::registry::{Compressed, Registry};
use crate::error::{Error, ErrorKind, Result};

/// Where raw command output is kept before compression: the episode store, in production.
pub trait RawOutputSink {
    /// Stores the raw output of `command` and returns the episode id that
    /// `get_episode` will return it under.
    ///
    /// # Errors
    /// Whatever the store reports; the runner then shows the raw output and reports the error.
    fn store_raw(
        &self,
        command: &str,
        stdout: &[u8],
        stderr: &[u8],
        exit_code: i32,
    ) -> Result<String>;
}

/// One call of [`RawOutputSink::store_raw`], as [`MemorySink`] keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRaw {
    /// The id returned for it.
    pub id: String,
    /// The command line.
    pub command: String,
    /// Raw stdout.
    pub stdout: Vec<u8>,
    /// Raw stderr.
    pub stderr: Vec<u8>,
    /// The exit code.
    pub exit_code: i32,
}

/// An in-memory [`RawOutputSink`] for tests and examples; ids are `raw-1`, `raw-2`, …
#[derive(Debug, Default)]
pub struct MemorySink {
    stored: Mutex<Vec<StoredRaw>>,
}

impl MemorySink {
    /// An empty sink.
    pub fn new() -> MemorySink {
        MemorySink::default()
    }

    /// Everything stored so far, oldest first.
    pub fn stored(&self) -> Vec<StoredRaw> {
        self.stored
            .lock()
            .map(|s| s.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    /// The entry stored under `id`.
    pub fn get(&self, id: &str) -> Option<StoredRaw> {
        self.stored().into_iter().find(|s| s.id == id)
    }
}

impl RawOutputSink for MemorySink {
    fn store_raw(
        &self,
        command: &str,
        stdout: &[u8],
        stderr: &[u8],
        exit_code: i32,
    ) -> Result<String> {
        let mut stored = self
            .stored
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let id = format!("raw-{}", stored.len() + 1);
        stored.push(StoredRaw {
            id: id.clone(),
            command: command.to_owned(),
            stdout: stdout.to_vec(),
            stderr: stderr.to_vec(),
            exit_code,
        });
        Ok(id)
    }
}

/// What the child process reads on stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stdin {
    /// The runner's own stdin (the default).
    #[default]
    Inherit,
    /// Closed: reads see end of file at once.
    Null,
}

/// The result of [`Runner::run`].
#[derive(Debug)]
pub struct RunOutput {
    /// What to show on stdout: the compressed text followed by the hint, or the raw bytes.
    pub stdout: Vec<u8>,
    /// The command's stderr, unchanged.
    pub stderr: Vec<u8>,
    /// The command's exit code (`128 + signal` when a signal ended it).
    pub exit_code: i32,
    /// The id the sink stored the raw output under, if it succeeded.
    pub episode_id: Option<String>,
    /// The compression applied, if any.
    pub compressed: Option<Compressed>,
    /// Why the raw output could not be stored; stdout is then raw.
    pub store_error: Option<Error>,
    /// The command ran past [`Runner::timeout`] and was killed (its exit code is then that of
    /// `SIGKILL`, 137); stdout ends with a line saying so.
    pub timed_out: bool,
    /// The caller of [`Runner::run_while`] asked to stop while the command ran: it got `SIGINT`,
    /// then whatever it started and left running `SIGKILL` (the exit code is the command's own,
    /// 130 for a shell the `SIGINT` ended); stdout ends with a line saying so.
    pub interrupted: bool,
    /// A process the command started in the background (`server &`, or one that left the
    /// process group before a kill) still held its output when the command ended (Unix only;
    /// elsewhere the runner waits for it). The runner kept all the command wrote before it
    /// exited, and what followed until the pipes stayed quiet for 0.2 s (at most 1 s or 8 MiB
    /// more), then left the process running: stdout ends with a line saying so, and the rest is
    /// read and dropped by a `cat` that outlives this process, so the background process never
    /// writes into a closed pipe.
    pub left_running: bool,
}

/// Runs commands through `sh -c`, storing raw output before compressing it.
#[derive(Debug)]
pub struct Runner<'r> {
    registry: &'r Registry,
    shell: PathBuf,
    stdin: Stdin,
    current_dir: Option<PathBuf>,
    raw_command: Option<String>,
    timeout: Option<Duration>,
    compress: bool,
}

impl<'r> Runner<'r> {
    /// A runner that uses `registry`, `sh` from `PATH`, inherited stdin and the current directory.
    pub fn new(registry: &'r Registry) -> Runner<'r> {
        Runner {
            registry,
            shell: PathBuf::from("sh"),
            stdin: Stdin::Inherit,
            current_dir: None,
            raw_command: None,
            timeout: None,
            compress: true,
        }
    }

    /// Uses `shell` (run as `shell -c command`) instead of `sh`.
    #[must_use]
    pub fn shell(mut self, shell: impl Into<PathBuf>) -> Self {
        self.shell = shell.into();
        self
    }

    /// Chooses what the command reads on stdin.
    #[must_use]
    pub fn stdin(mut self, stdin: Stdin) -> Self {
        self.stdin = stdin;
        self
    }

    /// Names `command` (a shell command that prints an episode's raw output when given its
    /// id) in the hint instead of the `get_episode` tool: for a model that reads this output
    /// through its shell and has no memory tools.
    #[must_use]
    pub fn raw_command(mut self, command: impl Into<String>) -> Self {
        self.raw_command = Some(command.into());
        self
    }

    /// With `false`, stdout is returned as the command printed it, still stored in the sink
    /// first: for a model that cannot reach the stored output (memory switched off and no
    /// `raw_command`), to which a marker would name lines it can never read. On by default.
    #[must_use]
    pub fn compress(mut self, compress: bool) -> Self {
        self.compress = compress;
        self
    }

    /// Kills a command still running after `timeout`, with its process group (see the module
    /// docs). `None` or a zero duration waits as long as the command runs (0 is "no limit" in
    /// every binding too). The command then runs in a process group of its own, so it cannot
    /// read from the terminal: give a timeout only to commands that do not prompt.
    #[must_use]
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout.filter(|t| !t.is_zero());
        self
    }

    /// Runs commands in `dir` instead of the current directory.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// Runs `command`, stores its raw output in `sink`, and returns what to show.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidInput`] for an empty command or one holding a NUL character;
    /// [`ErrorKind::Io`] when the shell cannot
    /// be started or its output cannot be read. A failing command is not an error: its exit code
    /// is in the result. A failing sink is not an error either: see [`RunOutput::store_error`].
    pub fn run(&self, command: &str, sink: &dyn RawOutputSink) -> Result<RunOutput> {
        self.run_checked(command, sink, None)
    }

    /// [`Runner::run`], asking `keep_going` about every 0.1 s while the command runs: when it
    /// answers `false` (the person pressed Ctrl-C, say) the command gets `SIGINT` and, a second
    /// later or once it ended, what it started `SIGKILL`; what it printed is stored and shown, and
    /// [`RunOutput::interrupted`] says so. The command runs in a process group of its own, as
    /// with a timeout (so it cannot read from the terminal): the caller answers for Ctrl-C.
    ///
    /// # Errors
    /// As [`Runner::run`].
    pub fn run_while(
        &self,
        command: &str,
        sink: &dyn RawOutputSink,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<RunOutput> {
        self.run_checked(command, sink, Some(keep_going))
    }

    fn run_checked(
        &self,
        command: &str,
        sink: &dyn RawOutputSink,
        keep_going: Option<&mut dyn FnMut() -> bool>,
    ) -> Result<RunOutput> {
        if command.trim().is_empty() {
            return Err(Error::invalid_input(
                "the command to run is empty; pass a shell command line such as \"cargo test\"",
            ));
        }
        if let Some(at) = command.find('\0') {
            return Err(Error::invalid_input(format!(
                "the command to run holds a NUL character at byte {at}; a shell command line \
                 cannot carry one"
            )));
        }
        let Ended {
            stdout,
            stderr,
            exit_code,
            killed,
            left_running,
        } = self.execute(command, keep_going)?;
        let (timed_out, interrupted) =
            (killed == Killed::AtDeadline, killed == Killed::Interrupted);
        let (episode_id, store_error) = match sink.store_raw(command, &stdout, &stderr, exit_code) {
            Ok(id) => (Some(id), None),
            Err(err) => (None, Some(err)),
        };
        let compressed = episode_id
            .as_ref()
            .filter(|_| self.compress)
            .and_then(|_| self.registry.compress(command, &stdout));
        let mut shown = match (&compressed, &episode_id) {
            (Some(c), Some(id)) => c
                .with_hint_via(id, self.raw_command.as_deref())
                .into_bytes(),
            _ => stdout,
        };
        let note = match (killed, self.timeout) {
            (Killed::AtDeadline, Some(limit)) => {
                Some(format!("ran past its {} s timeout", limit.as_secs_f64()))
            }
            (Killed::Interrupted, _) => Some("was interrupted".to_owned()),
            _ => None,
        };
        if let Some(what) = note {
            append_line(
                &mut shown,
                &format!(
                    "[codeoid: the command {what} and was killed; the output above is what it \
                     printed until then]"
                ),
            );
        }
        if left_running {
            append_line(
                &mut shown,
                "[codeoid: the command ended, but a process it started still runs and holds its \
                 output; it was left running, and what it prints from now on is not shown]",
            );
        }
        Ok(RunOutput {
            stdout: shown,
            stderr,
            exit_code,
            episode_id,
            compressed,
            store_error,
            timed_out,
            interrupted,
            left_running,
        })
    }

    /// Runs `command` and says how it ended.
    fn execute(
        &self,
        command: &str,
        keep_going: Option<&mut dyn FnMut() -> bool>,
    ) -> Result<Ended> {
        let mut cmd = Command::new(&self.shell);
        cmd.arg("-c")
            .arg(command)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.stdin(match self.stdin {
            Stdin::Inherit => Stdio::inherit(),
            Stdin::Null => Stdio::null(),
        });
        if let Some(dir) = &self.current_dir {
            cmd.current_dir(dir);
        }
        #[cfg(unix)]
        if self.timeout.is_some() || keep_going.is_some() {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        if keep_going.is_some() {
            child::sigint_by_default(&mut cmd);
        }
        let mut child = cmd.spawn().map_err(|err| {
            Error::new(
                ErrorKind::Io,
                format!(
                    "cannot start {} to run the command; check that it is installed and on PATH",
                    self.shell.display()
                ),
            )
            .with_source(err)
        })?;
        let (Some(out_pipe), Some(err_pipe)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(Error::internal("the child process has no output pipes"));
        };
        let read_error = |err: std::io::Error| {
            Error::new(ErrorKind::Io, "cannot read the command's output").with_source(err)
        };
        // Each capture holds a sender: the channel disconnects when both pipes have ended.
        let (done, ended) = mpsc::channel::<()>();
        let deadline = self.timeout.map(|limit| Instant::now() + limit);
        let captures = Capture::start(out_pipe, done.clone())
            .and_then(|out| Ok((out, Capture::start(err_pipe, done)?)));
        let (out_capture, err_capture) = match captures {
            Ok(captures) => captures,
            Err(err) => {
                // No thread to read its output: end the command rather than leave it running.
                let _ = child.kill();
                let _ = child.wait();
                return Err(read_error(err));
            }
        };
        // The readers learn of an exit of the command's own at once, so that they keep as little
        // as possible of what a process it left running prints after it; an exit the runner
        // caused is passed on below, once the processes it killed had a moment to die.
        let ending = Arc::new(AtomicBool::new(false));
        let (out_notice, err_notice) = (out_capture.exit_notice(), err_capture.exit_notice());
        let waiter_ending = Arc::clone(&ending);
        child::on_exit(child.id(), move || {
            if !waiter_ending.load(Ordering::Acquire) {
                out_notice.give();
                err_notice.give();
            }
        });
        let killed = child::watch(&mut child, &ended, deadline, keep_going, &ending);
        if killed != Killed::No {
            child::after_kill(&mut child, &ended);
        }
        // The command exited, was killed, or closed its output: what the pipes still carry
        // once they are empty belongs to a process it left running.
        out_capture.command_exited();
        err_capture.command_exited();
        let _ = ended.recv();
        let (stdout, out_cut) = out_capture.finish().map_err(read_error)?;
        let (stderr, err_cut) = err_capture.finish().map_err(read_error)?;
        let left_running = out_cut || err_cut;
        let status = child.wait().map_err(|err| {
            Error::new(ErrorKind::Io, "cannot wait for the command to finish").with_source(err)
        })?;
        let code = child::exit_code(status);
        // Killed at the deadline, not a command that ended on its own as the deadline came.
        let killed = match killed {
            Killed::AtDeadline if code != 128 + child::SIGKILL => Killed::No,
            killed => killed,
        };
        Ok(Ended {
            stdout,
            stderr,
            exit_code: code,
            killed,
            left_running,
        })
    }
}

/// Appends `line` to `shown` on a line of its own.
fn append_line(shown: &mut Vec<u8>, line: &str) {
    if !shown.is_empty() && !shown.ends_with(b"\n") {
        shown.push(b'\n');
    }
    shown.extend_from_slice(line.as_bytes());
    shown.push(b'\n');
}

/// How a command ended: what [`Runner::execute`] saw.
struct Ended {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit_code: i32,
    killed: Killed,
    /// A process it started still held its output when it exited: see [`RunOutput::left_running`].
    left_running: bool,
}
