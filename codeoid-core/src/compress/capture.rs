//! One output pipe of a running command, read on a thread of its own into a buffer, so neither
//! pipe can fill up and stall the command.
//!
//! Usually the pipe ends with the command and [`Capture::finish`] joins the thread. A process the
//! command left running in the background (`server &`) keeps the pipe open after the command
//! itself exited, possibly for days. So once told that the command exited
//! ([`Capture::command_exited`]), the thread first reads until it has all the command wrote
//! before it exited: that was in the pipe at the exit, so it has it once it found the pipe empty
//! or read one pipe buffer's worth more. It goes on keeping what arrives until the pipe stays
//! quiet for [`SETTLE_QUIET`] (a filter the shell does not wait for, as in `exec > >(tee log)`,
//! may still be writing the command's last lines), for at most [`SETTLE_MAX`] and
//! [`SETTLE_BYTES`]. Then it is "cut loose": it says it has settled as if the pipe had ended,
//! and drops what it reads from then on.
//!
//! So that the background process never writes into a closed pipe (`SIGPIPE` would end it) once
//! this process exits too, as `codeoid run` does at once, [`Capture::finish`] hands a pipe cut
//! loose to a `cat` of its own that reads it to its end, and the thread ends. All of this needs
//! `poll`: elsewhere than on Unix a pipe is read to its end, however long that takes.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much one read takes from the pipe.
const CHUNK: usize = 64 * 1024;

/// How often a reader waiting on a quiet pipe looks whether the command has exited.
const EXIT_LOOK: Duration = Duration::from_millis(50);

/// The most a pipe can hold where its size cannot be asked (Linux allows up to 1 MiB).
const PIPE_BUFFER_CEILING: usize = 1 << 20;

/// Once all the command wrote before it exited was read, how long the pipe must stay quiet for
/// what still holds it to count as left running. Output can go on for a moment after the exit:
/// a filter the shell does not wait for (`exec > >(tee log)`) still has lines in hand.
const SETTLE_QUIET: Duration = Duration::from_millis(200);

/// The longest, and the most, a reader keeps after the exit of output that never pauses.
const SETTLE_MAX: Duration = Duration::from_secs(1);
const SETTLE_BYTES: usize = 8 << 20;

/// What the reading thread and the runner share.
#[derive(Default)]
struct Shared {
    /// What was kept.
    bytes: Mutex<Vec<u8>>,
    /// Set by the runner when the command exited.
    exited: AtomicBool,
    /// Set by the thread when it stopped keeping what it reads (the pipe outlived the command).
    cut: AtomicBool,
    /// Set once a `cat` reads the pipe too: the thread may end.
    retired: AtomicBool,
}

/// A pipe being read on its own thread.
pub(super) struct Capture {
    shared: Arc<Shared>,
    thread: JoinHandle<std::io::Result<()>>,
    /// A second handle on the pipe, for a `cat` to read if the capture is cut loose.
    #[cfg(unix)]
    spare: Option<std::os::fd::OwnedFd>,
}

impl Capture {
    /// Starts reading `pipe`; `done` is dropped once the pipe ended, failed, or was cut loose,
    /// so a receiver learns that every capture holding a sender has settled.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub(super) fn start<P: Pipe>(pipe: P, done: mpsc::Sender<()>) -> std::io::Result<Capture> {
        #[cfg(unix)]
        let spare = std::os::fd::AsFd::as_fd(&pipe).try_clone_to_owned().ok();
        let shared = Arc::new(Shared::default());
        let reader_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("codeoid-run-output".to_owned())
            .spawn(move || read_into(pipe, &reader_shared, done))?;
        Ok(Capture {
            shared,
            thread,
            #[cfg(unix)]
            spare,
        })
    }

    /// Tells the thread that the command exited (or was killed, or closed its output): from
    /// then on it settles as the module's documentation says.
    pub(super) fn command_exited(&self) {
        self.exit_notice().give();
    }

    /// A handle that does what [`Capture::command_exited`] does, for a thread that waits for
    /// the exit (the sooner the thread knows, the less of a background process's output it
    /// keeps).
    pub(super) fn exit_notice(&self) -> ExitNotice {
        ExitNotice(Arc::clone(&self.shared))
    }

    /// What the pipe carried, once it settled (the `done` sender was dropped), and whether a
    /// background process still holds it (the capture was cut loose). A pipe cut loose is left
    /// to the thread, which drops what it reads, and to a `cat` that outlives this process.
    ///
    /// # Errors
    /// A failed read of a pipe that ended.
    pub(super) fn finish(self) -> std::io::Result<(Vec<u8>, bool)> {
        let cut = self.shared.cut.load(Ordering::Acquire);
        if cut {
            #[cfg(unix)]
            if let Some(spare) = self.spare {
                if !self.thread.is_finished() && hand_to_cat(spare) {
                    self.shared.retired.store(true, Ordering::Release);
                }
            }
        } else {
            self.thread
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("an output reader panicked")))?;
        }
        let mut bytes = self
            .shared
            .bytes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Ok((std::mem::take(&mut bytes), cut))
    }
}

/// Tells a [`Capture`]'s thread that the command exited.
pub(super) struct ExitNotice(Arc<Shared>);

impl ExitNotice {
    pub(super) fn give(&self) {
        self.0.exited.store(true, Ordering::Release);
    }
}

/// What a reader knows once the command exited.
struct AfterExit {
    at: Instant,
    /// Bytes kept since.
    read: usize,
    /// What the pipe's buffer held at most when the command exited.
    buffer: usize,
    /// The pipe was found empty since.
    emptied: bool,
}

impl AfterExit {
    /// Whether all the command wrote before it exited has been read: it was in the pipe then.
    fn holds_all_before(&self) -> bool {
        self.emptied || self.read >= self.buffer
    }
}

/// Reads `pipe` to its end into `shared.bytes`, until it is cut loose (see the module's
/// documentation); drops `done` when it ends or is cut, and stops once retired.
fn read_into(mut pipe: impl Pipe, shared: &Shared, done: mpsc::Sender<()>) -> std::io::Result<()> {
    // Dropped when the function returns, or at the cut.
    let mut done = Some(done);
    let mut chunk = vec![0u8; CHUNK];
    let mut after: Option<AfterExit> = None;
    loop {
        let cut = shared.cut.load(Ordering::Relaxed);
        if cut {
            if shared.retired.load(Ordering::Acquire) {
                return Ok(());
            }
            if !pipe.readable_within(EXIT_LOOK) {
                continue;
            }
        } else {
            if after.is_none() && shared.exited.load(Ordering::Acquire) {
                after = Some(AfterExit {
                    at: Instant::now(),
                    read: 0,
                    buffer: pipe.buffer_size(),
                    emptied: false,
                });
            }
            if let Some(after) = after.as_mut() {
                let all_before = after.holds_all_before();
                let enough = after.at.elapsed() >= SETTLE_MAX || after.read >= SETTLE_BYTES;
                let wait = if all_before {
                    SETTLE_QUIET
                } else {
                    Duration::ZERO
                };
                if all_before && enough || !pipe.readable_within(wait) {
                    if all_before {
                        // What comes from now on is not the command's.
                        shared.cut.store(true, Ordering::Release);
                        drop(done.take());
                    } else {
                        after.emptied = true;
                    }
                    continue;
                }
            } else if !pipe.readable_within(EXIT_LOOK) {
                continue;
            }
        }
        let n = match pipe.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            // Once cut loose nobody reads the result: end quietly.
            Err(_) if cut => return Ok(()),
            Err(err) => return Err(err),
        };
        if !cut {
            let mut bytes = shared.bytes.lock().unwrap_or_else(PoisonError::into_inner);
            bytes.extend_from_slice(&chunk[..n]);
            if let Some(after) = after.as_mut() {
                after.read += n;
            }
        }
    }
}

/// An output pipe: read, and asked whether a read would find data.
pub(super) trait Pipe: Read + Send + 'static + PipeFd {
    /// Whether the pipe has data to read (or has ended) within `wait`.
    fn readable_within(&self, wait: Duration) -> bool;

    /// The most the pipe's buffer holds.
    fn buffer_size(&self) -> usize {
        PIPE_BUFFER_CEILING
    }
}

/// What a [`Pipe`] needs of its handle: a file descriptor on Unix, nothing elsewhere.
#[cfg(unix)]
pub(super) trait PipeFd: std::os::fd::AsFd {}
#[cfg(unix)]
impl<T: std::os::fd::AsFd> PipeFd for T {}
/// What a [`Pipe`] needs of its handle: a file descriptor on Unix, nothing elsewhere.
#[cfg(not(unix))]
pub(super) trait PipeFd {}
#[cfg(not(unix))]
impl<T> PipeFd for T {}

#[cfg(unix)]
impl<T: Read + Send + 'static + std::os::fd::AsFd> Pipe for T {
    fn readable_within(&self, wait: Duration) -> bool {
        use std::os::fd::AsRawFd;
        let until = Instant::now() + wait;
        loop {
            let mut poll = libc::pollfd {
                fd: self.as_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let left = until.saturating_duration_since(Instant::now());
            let millis = libc::c_int::try_from(left.as_millis()).unwrap_or(libc::c_int::MAX);
            // SAFETY: poll(2) on one valid pollfd that lives across the call.
            let ready = unsafe { libc::poll(&mut poll, 1, millis) };
            if ready >= 0 {
                return ready > 0;
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                // Not a pipe poll can watch: let the read say what is wrong.
                return true;
            }
        }
    }

    #[cfg(target_os = "linux")]
    fn buffer_size(&self) -> usize {
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl(2) F_GETPIPE_SZ on a valid descriptor reads an integer, nothing else.
        let size = unsafe { libc::fcntl(self.as_fd().as_raw_fd(), libc::F_GETPIPE_SZ) };
        usize::try_from(size)
            .ok()
            .filter(|s| *s > 0)
            .unwrap_or(PIPE_BUFFER_CEILING)
    }
}

/// Without `poll`, every read is allowed to block: the pipe is read to its end, however long a
/// background process holds it.
#[cfg(not(unix))]
impl<T: Read + Send + 'static> Pipe for T {
    fn readable_within(&self, _wait: Duration) -> bool {
        true
    }
}

/// Starts a `cat` that reads `pipe` to its end and drops it, outliving this process (in `/`, so
/// that it pins no directory), and says whether it started: `sh` saves
/// the pipe (its stdin) as fd 3 before starting `cat` in the background (a background job's
/// stdin would otherwise be `/dev/null`) and exits at once, so `cat` is nobody's child here and
/// leaves no zombie. Best effort: without `sh` or `cat` the thread alone reads the pipe, for as
/// long as this process lives.
#[cfg(unix)]
fn hand_to_cat(pipe: std::os::fd::OwnedFd) -> bool {
    use std::process::{Command, Stdio};
    let started = Command::new("sh")
        .arg("-c")
        .arg("exec 3<&0; cat <&3 >/dev/null 2>&1 3<&- &")
        .current_dir("/")
        .stdin(Stdio::from(pipe))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    started
        .and_then(|mut shell| shell.wait())
        .is_ok_and(|status| status.success())
}
