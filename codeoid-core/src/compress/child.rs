//! The child process of a run: waiting for it while other threads read its pipes, and ending
//! it with everything it started when its deadline passes or its caller asks.
//!
//! A deadline kills at once (`SIGKILL` to the process group). A caller's stop is a Ctrl-C
//! passed on: `SIGINT` to the group first, so a test runner can print what it has, then, once
//! the command ended or [`INTERRUPT_GRACE`] passed, `SIGKILL` for whatever is left (background
//! jobs of a non-interactive shell ignore `SIGINT`).
//!
//! A command's output can outlive it: a process it started in the background (`server &`)
//! inherits the pipes and holds them for as long as it runs. So the wait ends when the command
//! exits, output open or not; what the pipes still carry is sorted out by `capture`.

use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// How often a running command is checked for having exited while its output stays open.
const EXIT_POLL: Duration = Duration::from_millis(50);

/// The longest the processes of a killed command's group get to die (closing its output as they
/// do; a process with a large memory takes a while): what still holds it after that, or once
/// the group is gone, left the group (`setsid`).
const KILL_SETTLE_MAX: Duration = Duration::from_secs(10);

/// `SIGKILL`: what a killed command's exit code (`128 + signal`) carries.
pub(super) const SIGKILL: i32 = 9;

const SIGINT: i32 = 2;

/// Waits until `child` has exited or its output has ended, its `deadline` passes, or
/// `keep_going` answers `false` (asked about every 0.1 s); in the last two cases ends it and
/// everything it started, and says which struck. Once the output ended, with a deadline or a
/// `keep_going`, it waits for the exit too (a command can close its pipes and keep running, and
/// is still timed and interruptible); without either it leaves the caller to wait for the exit.
/// Output still open after the exit is the caller's to sort out.
///
/// `ending` is set before the first signal, so that a thread seeing the exit (see [`on_exit`])
/// can tell an exit of the command's own from the end the runner gave it.
pub(super) fn watch<'k>(
    child: &mut Child,
    ended: &mpsc::Receiver<()>,
    deadline: Option<Instant>,
    keep_going: Option<&mut (dyn FnMut() -> bool + 'k)>,
    ending: &AtomicBool,
) -> Killed {
    let killed = until_ended(child, ended, deadline, keep_going);
    if killed != Killed::No {
        ending.store(true, Ordering::Release);
    }
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

/// [`watch`]'s wait: for the process to exit or its output to end; once the output ended, with
/// a deadline or a `keep_going`, for the exit too.
fn until_ended<'k>(
    child: &mut Child,
    ended: &mpsc::Receiver<()>,
    deadline: Option<Instant>,
    mut keep_going: Option<&mut (dyn FnMut() -> bool + 'k)>,
) -> Killed {
    let watched = deadline.is_some() || keep_going.is_some();
    let mut output_ended = false;
    let mut asked_at = Instant::now();
    loop {
        let to_deadline = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let mut wait = to_deadline.map_or(EXIT_POLL, |d| d.min(EXIT_POLL));
        if keep_going.is_some() {
            wait = wait.min(INTERRUPT_POLL.saturating_sub(asked_at.elapsed()));
        }
        if output_ended {
            // Only the exit is left to see: look often, it usually follows at once.
            std::thread::sleep(wait.min(Duration::from_millis(5)));
            if exited(child) {
                return Killed::No;
            }
        } else {
            match ended.recv_timeout(wait) {
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // Exited with the output still open: something it started holds the pipes.
                    if exited(child) {
                        return Killed::No;
                    }
                }
                Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    output_ended = true;
                    if !watched || exited(child) {
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

/// Calls `on_exit` on a thread of its own as soon as process `pid`, a child of this process,
/// has exited, without reaping it (`waitid` with `WNOWAIT`: [`Child::try_wait`] and
/// [`Child::wait`] still see its status); also when it was reaped first (`ECHILD`). When
/// `waitid` fails otherwise (a sandbox that forbids it), `on_exit` is never called: the caller
/// learns of the exit its own way.
#[cfg(unix)]
pub(super) fn on_exit(pid: u32, on_exit: impl FnOnce() + Send + 'static) {
    // `id_t` is a u32 on Linux and macOS, an i32 elsewhere.
    #[allow(irrefutable_let_patterns)]
    let Ok(pid) = libc::id_t::try_from(pid) else {
        return;
    };
    let waiter = move || {
        loop {
            // SAFETY: waitid(2) fills the zeroed siginfo_t it is given, nothing else.
            let waited = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT)
            };
            if waited == 0 {
                break;
            }
            match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => {}
                Some(libc::ECHILD) => break,
                _ => return,
            }
        }
        on_exit();
    };
    let _ = std::thread::Builder::new()
        .name("codeoid-run-exit".to_owned())
        .spawn(waiter);
}

#[cfg(not(unix))]
pub(super) fn on_exit(_pid: u32, _on_exit: impl FnOnce() + Send + 'static) {}

/// After [`watch`] killed `child`'s process group: waits until the output ended, or the group is
/// gone (its leader reaped, no member left), or [`KILL_SETTLE_MAX`] passed.
pub(super) fn after_kill(child: &mut Child, ended: &mpsc::Receiver<()>) {
    let _ = child.wait();
    let give_up = Instant::now() + KILL_SETTLE_MAX;
    while Instant::now() < give_up && group_alive(child.id()) {
        if !matches!(
            ended.recv_timeout(Duration::from_millis(10)),
            Err(mpsc::RecvTimeoutError::Timeout)
        ) {
            return;
        }
    }
}

/// Whether process group `group` still has a member.
#[cfg(unix)]
fn group_alive(group: u32) -> bool {
    let Ok(group) = libc::pid_t::try_from(group) else {
        return false;
    };
    // SAFETY: kill(2) with signal 0 only checks that the group exists; nothing is sent.
    let alive = unsafe { libc::kill(-group, 0) } == 0;
    alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn group_alive(_group: u32) -> bool {
    false
}

/// Whether `child` has exited (or can no longer be asked).
fn exited(child: &mut Child) -> bool {
    !matches!(child.try_wait(), Ok(None))
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
