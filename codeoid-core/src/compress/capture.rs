//! One output pipe of a running command, read on a thread of its own into a buffer, so neither
//! pipe can fill up and stall the command.
//!
//! Usually the pipe ends with the command and [`Capture::finish`] joins the thread. A process the
//! command left running in the background (`server &`) keeps the pipe open after the command
//! itself exited, possibly for days; [`Capture::cut_loose`] then takes what was read so far and
//! leaves the thread reading and dropping the rest. So that the background process never writes
//! into a closed pipe (`SIGPIPE` would end it) once this process exits too, as `codeoid run`
//! does at once, the pipe is also handed to a `cat` of its own that reads it to its end.

use std::io::Read;
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread::JoinHandle;

/// How much one read takes from the pipe.
const CHUNK: usize = 64 * 1024;

/// What the reading thread and the runner share.
#[derive(Default)]
struct Shared {
    bytes: Vec<u8>,
    /// Set by [`Capture::cut_loose`]: the thread drops what it reads from then on.
    cut: bool,
}

/// A pipe being read on its own thread.
pub(super) struct Capture {
    shared: Arc<Mutex<Shared>>,
    thread: JoinHandle<std::io::Result<()>>,
    /// A second handle on the pipe for a `cat` to read if the capture is cut loose.
    #[cfg(unix)]
    spare: Option<std::os::fd::OwnedFd>,
}

impl Capture {
    /// Starts reading `pipe`; `done` is dropped when the pipe ends (or fails), so a receiver
    /// learns that every capture holding a sender has ended.
    pub(super) fn start<P>(pipe: P, done: mpsc::Sender<()>) -> std::io::Result<Capture>
    where
        P: Read + Send + 'static + PipeHandle,
    {
        #[cfg(unix)]
        let spare = pipe.spare().ok();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let reader_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("codeoid-run-output".to_owned())
            .spawn(move || {
                let read = read_into(pipe, &reader_shared);
                drop(done);
                read
            })?;
        Ok(Capture {
            shared,
            thread,
            #[cfg(unix)]
            spare,
        })
    }

    /// Everything the pipe carried, once it ended.
    ///
    /// # Errors
    /// A failed read of the pipe.
    pub(super) fn finish(self) -> std::io::Result<Vec<u8>> {
        self.thread
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("an output reader panicked")))?;
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(std::mem::take(&mut shared.bytes))
    }

    /// What the pipe carried so far, for a pipe that a background process still holds: the
    /// thread drops whatever it reads from now on, and a `cat` reads the pipe to its end too.
    pub(super) fn cut_loose(self) -> Vec<u8> {
        let bytes = {
            let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
            shared.cut = true;
            std::mem::take(&mut shared.bytes)
        };
        #[cfg(unix)]
        if let Some(spare) = self.spare {
            if !self.thread.is_finished() {
                hand_to_cat(spare);
            }
        }
        bytes
    }
}

/// Reads `pipe` to its end into `shared.bytes`, or drops what it reads once `shared.cut` is set.
fn read_into(mut pipe: impl Read, shared: &Mutex<Shared>) -> std::io::Result<()> {
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = match pipe.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => {
                let cut = shared.lock().unwrap_or_else(PoisonError::into_inner).cut;
                // Once cut loose nobody reads the result: keep nothing, end quietly.
                return if cut { Ok(()) } else { Err(err) };
            }
        };
        let mut shared = shared.lock().unwrap_or_else(PoisonError::into_inner);
        if !shared.cut {
            shared.bytes.extend_from_slice(&chunk[..n]);
        }
    }
}

/// A pipe whose handle can be duplicated for a `cat` (on Unix).
pub(super) trait PipeHandle {
    /// A second handle on the same pipe.
    ///
    /// # Errors
    /// When the handle cannot be duplicated (no file descriptors left).
    #[cfg(unix)]
    fn spare(&self) -> std::io::Result<std::os::fd::OwnedFd>;
}

#[cfg(unix)]
impl<T: std::os::fd::AsFd> PipeHandle for T {
    fn spare(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        self.as_fd().try_clone_to_owned()
    }
}

#[cfg(not(unix))]
impl<T> PipeHandle for T {}

/// Starts a `cat` that reads `pipe` to its end and drops it, outliving this process: `sh` saves
/// the pipe (its stdin) as fd 3 before starting `cat` in the background (a background job's
/// stdin would otherwise be `/dev/null`) and exits at once, so `cat` is nobody's child here and
/// leaves no zombie. Best effort: without `sh` or `cat` the thread alone reads the pipe, for as
/// long as this process lives.
#[cfg(unix)]
fn hand_to_cat(pipe: std::os::fd::OwnedFd) {
    use std::process::{Command, Stdio};
    let started = Command::new("sh")
        .arg("-c")
        .arg("exec 3<&0; cat <&3 >/dev/null 2>&1 3<&- &")
        .stdin(Stdio::from(pipe))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Ok(mut shell) = started {
        let _ = shell.wait();
    }
}
