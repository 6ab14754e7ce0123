//! The child process of a run: waiting for it while other threads read its pipes, and ending
//! it with everything it started when its deadline passes or its caller asks.
//!
//! A deadline kills at once (`SIGKILL` to the process group). A caller's stop is a Ctrl-C
//! passed on: `SIGINT` to the group first, so a test runner can print what it has, then, once
//! the command ended or [`INTERRUPT_GRACE`] passed, `SIGKILL` for whatever is left (background
//! jobs of a non-interactive shell ignore `SIGINT`).

use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Whether, and why, the runner ended a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Killed {
    No,
    AtDeadline,
    Interrupted,
}

/// How often a running command's caller is asked whether to go on.
const INTERRUPT_POLL: Duration = Duration::from_millis(100);

/// How long an interrupted command has to end after `SIGINT` before it is killed.
const INTERRUPT_GRACE: Duration = Duration::from_secs(1);

/// `SIGKILL`: what a killed command's exit code (`128 + signal`) carries.
pub(super) const SIGKILL: i32 = 9;

const SIGINT: i32 = 2;

/// Waits until `child` has exited and its output has ended (`ended` disconnects), its
/// `deadline` passes, or `keep_going` answers `false` (asked about every 0.1 s); in the last two
/// cases ends it and everything it started, and says which struck. Without a deadline or a
/// `keep_going` it returns once the output ended, leaving the caller to wait for the exit.
pub(super) fn watch<'k>(
    child: &mut Child,
    ended: &mpsc::Receiver<()>,
    deadline: Option<Instant>,
    keep_going: Option<&mut (dyn FnMut() -> bool + 'k)>,
) -> Killed {
    let killed = match (deadline, keep_going) {
        (None, None) => {
            let _ = ended.recv();
            return Killed::No;
        }
        (deadline, keep_going) => until_ended(child, ended, deadline, keep_going),
    };
    let group = child.id();
    match killed {
        Killed::No => {}
        Killed::AtDeadline => signal_group(group, SIGKILL),
        Killed::Interrupted => {
            signal_group(group, SIGINT);
            let grace = Instant::now() + INTERRUPT_GRACE;
            while Instant::now() < grace && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(10));
            }
            signal_group(group, SIGKILL);
        }
    }
    killed
}

/// [`watch`]'s wait, with at least one of `deadline` and `keep_going`: first for the output to
/// end, then for the process to exit (a command can close its pipes and keep running).
fn until_ended<'k>(
    child: &mut Child,
    ended: &mpsc::Receiver<()>,
    deadline: Option<Instant>,
    mut keep_going: Option<&mut (dyn FnMut() -> bool + 'k)>,
) -> Killed {
    let mut output_ended = false;
    let mut asked_at = Instant::now();
    loop {
        let to_deadline = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let mut wait = to_deadline.unwrap_or(INTERRUPT_POLL);
        if keep_going.is_some() {
            wait = wait.min(INTERRUPT_POLL.saturating_sub(asked_at.elapsed()));
        }
        if output_ended {
            // Only the exit is left to see: look often, it usually follows at once.
            std::thread::sleep(wait.min(Duration::from_millis(5)));
            if !matches!(child.try_wait(), Ok(None)) {
                return Killed::No;
            }
        } else {
            match ended.recv_timeout(wait) {
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    output_ended = true;
                    if !matches!(child.try_wait(), Ok(None)) {
                        return Killed::No;
                    }
                }
            }
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Killed::AtDeadline;
        }
        if let Some(keep_going) = keep_going.as_deref_mut() {
            if asked_at.elapsed() >= INTERRUPT_POLL {
                asked_at = Instant::now();
                if !keep_going() {
                    return Killed::Interrupted;
                }
            }
        }
    }
}

/// Lets `cmd` act on `SIGINT` whatever this process does with it. A process started by one
/// that ignores `SIGINT` (under `nohup`, or as a shell's background job) ignores it too, and a
/// shell cannot even trap it then; in a group of its own, the command gets `SIGINT` only from
/// the runner passing a stop on, which must reach it.
#[cfg(unix)]
pub(super) fn sigint_by_default(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec; it only calls sigaction(2),
    // which is async-signal-safe, on a zeroed struct (no allocation).
    unsafe {
        cmd.pre_exec(|| {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = libc::SIG_DFL;
            if libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut()) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

#[cfg(not(unix))]
pub(super) fn sigint_by_default(_cmd: &mut std::process::Command) {}

/// Sends `signal` to process group `group` (the command runs in one of its own, led by it).
#[cfg(unix)]
fn signal_group(group: u32, signal: i32) {
    if let Ok(group) = libc::pid_t::try_from(group) {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory is shared.
        unsafe {
            libc::kill(-group, signal);
        }
    }
}

#[cfg(not(unix))]
fn signal_group(_group: u32, _signal: i32) {}

/// The exit code of a finished command: `128 + signal` when a signal ended it, as shells say.
#[cfg(unix)]
pub(super) fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// The exit code of a finished command.
#[cfg(not(unix))]
pub(super) fn exit_code(status: std::process::ExitStatus) -> i32 {
    status.code().unwrap_or(-1)
}
