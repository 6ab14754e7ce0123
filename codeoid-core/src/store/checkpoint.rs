//! WAL checkpoints off the write path.
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses the threshold, copying pages
//! and calling fsync twice: a single `record_turn` would then take milliseconds instead of tens
//! of microseconds. A file-backed [`super::Store`] therefore turns automatic checkpoints off on
//! its writer connection and runs `PRAGMA wal_checkpoint(PASSIVE)` on a thread of its own, with
//! its own connection, shortly after commits (at most every [`DEBOUNCE`], or sooner after
//! [`BURST`] commits, or right away once [`WAL_EAGER_BYTES`] were written since its last pass).
//! PASSIVE never blocks writers or readers; a checkpoint that another connection is running is
//! simply skipped.
//!
//! That alone cannot bound the WAL under sustained writes: SQLite restarts the WAL from its
//! start only when a write transaction begins after a checkpoint has copied every frame, and
//! back-to-back commits (an import, a busy harness) always begin while this thread is still
//! copying. Measured: 3.4 GB of WAL for a 234 MB database after 8 s of single-turn writes, every
//! commit extending the file (the kernel zeroing fresh pages cost a fifth of a commit). So the
//! writer watches the WAL's length (a WAL hook) and, once it passes [`WAL_BACKSTOP_BYTES`],
//! checkpoints itself right after its commit, before its next transaction can begin: it waits
//! for this thread's pass to end (so the two never collide, which under load made SQLite's own
//! automatic checkpoint fail again and again), copies what is left (little, because the eager
//! wake keeps this thread's passes following each other under bulk writes) and the next
//! transaction restarts the WAL. About once per 64 MiB written; everything below that stays off
//! the write path.
//!
//! Invariants: durability does not depend on this thread (a commit is in the WAL before it is
//! acknowledged); the thread stops and is joined when the store is dropped, and the last
//! connection to close checkpoints the rest. Neither side ever truncates the WAL or waits for
//! readers (a `RESTART` checkpoint would): a reader holding an old snapshot only delays the
//! restart to a later commit.

use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::wal::CheckpointMode;
use rusqlite::{Connection, MAIN_DB};

use super::connection;
use crate::error::{Error, Result};

/// WAL size past which the writer checkpoints inside its commit. The WAL hook counts frames
/// (a page each), so this is divided by the file's page size: 16,384 frames of the 4 KiB pages
/// codeoid creates, fewer in a file someone converted to bigger pages (`VACUUM`), which a limit
/// in frames let grow to 1 GiB of WAL at 64 KiB pages.
pub(crate) const WAL_BACKSTOP_BYTES: i64 = 64 * 1024 * 1024;

/// WAL written since the thread's last pass began past which it checkpoints right after a
/// commit, without waiting for [`DEBOUNCE`] or [`BURST`]: under sustained bulk writes its passes
/// then follow each other and the writer's backstop finds little left to copy, while small
/// commits keep the debounce (a pass per commit would cost them their latency).
const WAL_EAGER_BYTES: i64 = WAL_BACKSTOP_BYTES / 4;

/// Longest time a commit waits for its checkpoint.
const DEBOUNCE: Duration = Duration::from_millis(250);

/// Commits that trigger a checkpoint before [`DEBOUNCE`] has passed.
const BURST: u64 = 64;

#[derive(Default)]
struct State {
    pending: u64,
    stop: bool,
    /// This thread is checkpointing.
    running: bool,
    /// The writer is checkpointing (the backstop); this thread waits.
    held: bool,
    /// WAL frames when this thread's last pass began.
    frames_at_pass: i64,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// Frames in the WAL after the writer's last commit (from its WAL hook).
    wal_frames: AtomicI64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits on `wake` while `condition` holds.
    fn wait_while<'a>(
        &self,
        state: MutexGuard<'a, State>,
        condition: impl FnMut(&mut State) -> bool,
    ) -> MutexGuard<'a, State> {
        self.wake
            .wait_while(state, condition)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The checkpoint thread of one store.
pub(crate) struct Checkpointer {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
    /// [`WAL_BACKSTOP_BYTES`] in this file's pages.
    backstop_frames: i64,
    /// [`WAL_EAGER_BYTES`] in this file's pages.
    eager_frames: i64,
}

impl Checkpointer {
    /// Opens a connection to `path` and starts the thread.
    pub(crate) fn start(path: &Path, busy_timeout: Duration) -> Result<Checkpointer> {
        // Checkpoints stream WAL frames to the file; they need no cache of their own.
        let conn = connection::open(path, busy_timeout, -256)?;
        let page_size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(|e| connection::open_error(path, e))?;
        let (backstop_frames, eager_frames) = frame_limits(page_size);
        let shared = Arc::new(Shared::default());
        let thread_shared = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("codeoid-checkpoint".to_owned())
            .spawn(move || run(&conn, &thread_shared))
            .map_err(|e| {
                Error::internal("cannot start the store's checkpoint thread").with_source(e)
            })?;
        Ok(Checkpointer {
            shared,
            handle: Some(handle),
            backstop_frames,
            eager_frames,
        })
    }

    /// Watches the WAL's length on the writer connection `conn` (its WAL hook), for
    /// [`Checkpointer::after_commit`]. Replaces SQLite's automatic checkpoint, which must be off.
    ///
    /// # Errors
    /// A database error if the hook cannot be installed.
    pub(crate) fn watch(&self, conn: &mut Connection) -> rusqlite::Result<()> {
        let shared = Arc::clone(&self.shared);
        conn.wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, frames: i32| {
            shared
                .wal_frames
                .store(i64::from(frames), Ordering::Relaxed);
            Ok(())
        }))
    }

    /// After a write transaction committed on the writer `conn` (still held by the caller, so
    /// no transaction can begin meanwhile): wakes the thread, and past the backstop checkpoints
    /// on `conn` so that the next transaction restarts the WAL.
    pub(crate) fn after_commit(&self, conn: &Connection) {
        let mut frames = self.shared.wal_frames.load(Ordering::Relaxed);
        if frames >= self.backstop_frames {
            let mut state = self.shared.wait_while(self.shared.lock(), |s| s.running);
            state.held = true;
            drop(state);
            // Readers on old snapshots can leave it partial; a later commit tries again.
            let done = conn.wal_checkpoint_v2(Some(MAIN_DB), CheckpointMode::PASSIVE);
            if matches!(done, Ok((log, copied)) if log == copied) {
                // Everything is copied and the next transaction restarts the WAL: nothing is
                // left for the thread.
                self.shared.wal_frames.store(0, Ordering::Relaxed);
                frames = 0;
            }
            let mut state = self.shared.lock();
            state.held = false;
            if frames == 0 {
                state.frames_at_pass = 0;
            }
            drop(state);
            self.shared.wake.notify_all();
        }
        let mut state = self.shared.lock();
        state.pending += 1;
        if written_since_pass(frames, state.frames_at_pass) >= self.eager_frames {
            state.pending = state.pending.max(BURST);
        }
        if state.pending == 1 || state.pending >= BURST {
            self.shared.wake.notify_all();
        }
    }
}

/// [`WAL_BACKSTOP_BYTES`] and [`WAL_EAGER_BYTES`] in frames of `page_size` bytes (a WAL frame
/// holds one page), at least one each.
fn frame_limits(page_size: i64) -> (i64, i64) {
    let page_size = page_size.max(512);
    (
        (WAL_BACKSTOP_BYTES / page_size).max(1),
        (WAL_EAGER_BYTES / page_size).max(1),
    )
}

/// WAL frames written since the thread's last pass began, given the WAL's frames now and then.
/// A WAL that restarted since (fewer frames than then) counts from its start; one that restarted
/// and grew past the old count is undercounted, which only delays the early wake.
fn written_since_pass(frames: i64, at_pass: i64) -> i64 {
    if frames >= at_pass {
        frames - at_pass
    } else {
        frames
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
        if let Some(handle) = self.handle.take() {
            // A panic in the thread has nothing left to clean up; the store is closing anyway.
            let _ = handle.join();
        }
    }
}

fn run(conn: &Connection, shared: &Shared) {
    let mut state = shared.lock();
    loop {
        state = shared.wait_while(state, |s| s.pending == 0 && !s.stop);
        if state.stop {
            return;
        }
        // Let a burst of commits land, unless it is already big.
        let deadline = Instant::now() + DEBOUNCE;
        while state.pending < BURST && !state.stop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = shared
                .wake
                .wait_timeout(state, left)
                .map(|(s, _)| s)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        state = shared.wait_while(state, |s| s.held && !s.stop);
        if state.stop {
            return;
        }
        state.pending = 0;
        state.running = true;
        state.frames_at_pass = shared.wal_frames.load(Ordering::Relaxed);
        drop(state);
        // Busy or I/O trouble: the next commit tries again, and SQLite checkpoints on close
        // regardless.
        let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        state = shared.lock();
        state.running = false;
        shared.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_are_the_same_bytes_whatever_the_page_size() {
        assert_eq!(frame_limits(4096), (16_384, 4_096));
        assert_eq!(frame_limits(16_384), (4_096, 1_024));
        assert_eq!(frame_limits(65_536), (1_024, 256));
    }

    #[test]
    fn the_early_wake_counts_what_was_written_since_the_last_pass() {
        let (_, eager) = frame_limits(4096);
        assert_eq!(written_since_pass(6_000, 1_000), 5_000);
        assert!(written_since_pass(6_000, 1_000) >= eager);
        // Small commits past 16 MiB of WAL do not wake a pass each.
        assert!(written_since_pass(20_000, 19_990) < eager);
        // A restarted WAL counts from its start.
        assert_eq!(written_since_pass(300, 12_000), 300);
    }
}
