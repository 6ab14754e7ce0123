//! WAL checkpoints off the write path.
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses the threshold, copying pages
//! and calling fsync twice: a single `record_turn` would then take milliseconds instead of tens
//! of microseconds. A file-backed [`super::Store`] therefore turns automatic checkpoints off on
//! its writer connection and runs `PRAGMA wal_checkpoint(PASSIVE)` on a thread of its own, with
//! its own connection, shortly after commits (at most every [`DEBOUNCE`], or sooner after
//! [`BURST`] commits). PASSIVE never blocks writers or readers; a checkpoint that another
//! connection is running is simply skipped.
//!
//! That alone cannot bound the WAL under sustained writes: SQLite restarts the WAL from its
//! start only when a write transaction begins after a checkpoint has copied every frame, and
//! back-to-back commits (an import, a busy harness) always begin while this thread is still
//! copying. Measured: 3.4 GB of WAL for a 234 MB database after 8 s of single-turn writes, every
//! commit extending the file (the kernel zeroing fresh pages cost a fifth of a commit). So the
//! writer keeps SQLite's own automatic checkpoint as a backstop at [`WAL_BACKSTOP_FRAMES`]: past
//! that, the committing connection copies what this thread has not (usually little) and the next
//! transaction restarts the WAL. It runs about once per 64 MiB of writes; everything below that
//! stays off the write path.
//!
//! Invariants: durability does not depend on this thread (a commit is in the WAL before it is
//! acknowledged); the thread stops and is joined when the store is dropped, and the last
//! connection to close checkpoints the rest. It deliberately never truncates or restarts the WAL
//! (that would wait for readers).

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::connection;
use crate::error::{Error, Result};

/// WAL frames (pages) past which the writer checkpoints inside its commit: 64 MiB of 4 KiB pages.
pub(crate) const WAL_BACKSTOP_FRAMES: i64 = 16_384;

/// Longest time a commit waits for its checkpoint.
const DEBOUNCE: Duration = Duration::from_millis(250);

/// Commits that trigger a checkpoint before [`DEBOUNCE`] has passed.
const BURST: u64 = 64;

#[derive(Default)]
struct State {
    pending: u64,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// The checkpoint thread of one store.
pub(crate) struct Checkpointer {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Opens a connection to `path` and starts the thread.
    pub(crate) fn start(path: &Path, busy_timeout: Duration) -> Result<Checkpointer> {
        // Checkpoints stream WAL frames to the file; they need no cache of their own.
        let conn = connection::open(path, busy_timeout, -256)?;
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
        })
    }

    /// Tells the thread a write transaction committed.
    pub(crate) fn note_commit(&self) {
        let mut state = self
            .shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.pending += 1;
        if state.pending == 1 || state.pending >= BURST {
            self.shared.wake.notify_one();
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop = true;
        self.shared.wake.notify_one();
        if let Some(handle) = self.handle.take() {
            // A panic in the thread has nothing left to clean up; the store is closing anyway.
            let _ = handle.join();
        }
    }
}

fn run(conn: &Connection, shared: &Shared) {
    let lock = || shared.state.lock().unwrap_or_else(PoisonError::into_inner);
    let mut state = lock();
    loop {
        while state.pending == 0 && !state.stop {
            state = shared
                .wake
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
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
        state.pending = 0;
        drop(state);
        // Busy (another checkpoint running) or I/O trouble: the next commit tries again, and
        // SQLite checkpoints on close regardless.
        let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        state = lock();
    }
}
