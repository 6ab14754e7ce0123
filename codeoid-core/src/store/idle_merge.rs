//! FTS5 segment merges while the writer is idle, so that they stay out of commits.
//!
//! FTS5 writes each transaction's index data as a new segment and merges segments inside
//! later commits: every 64 leaf pages written, a commit merges up to 64 pages per level of the
//! index (`automerge`), and a commit that leaves 16 segments on one level merges that whole
//! level at once (`crisismerge`). A harness recording one turn per model response pays for
//! those merges in the `record_turn` that happens to trigger them: measured on a store with
//! about 30,000 episodes, calls of 13 ms and one of 240 ms among calls of 0.3 ms.
//!
//! This thread does that work between the harness's calls instead. A commit tells it the time;
//! once the writer has been idle for [`IDLE`] it takes the writer connection, if it is free,
//! and runs `'merge'` steps of at most [`STEP_PAGES`] pages, one transaction each, until FTS5
//! has no level with `usermerge` (4) segments left or a commit arrives. Levels then never reach
//! `automerge` (8) segments, so commits find nothing to merge; under back-to-back writes (an
//! import) the writer is never idle, this thread never runs, and merging stays in the commits
//! as before.
//!
//! Invariants:
//! - It only ever uses the writer connection, under the writer's mutex, and never waits for it:
//!   a caller's write waits at most for the one step under way, and no step starts while a
//!   write is waiting.
//! - A step never waits for another process's write lock (its busy timeout is zero meanwhile):
//!   a busy store is left alone until the next idle spell.
//! - Merging changes how the index is laid out, never what it holds: searches see the same
//!   matches and scores before and after.
//! - The thread stops and is joined when the store is dropped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior};

use super::checkpoint::Checkpointer;
use crate::error::{Error, Result};

/// How long the writer must have been idle before merging starts: shorter than any pause of a
/// harness (a model call, a tool run); writes back to back (a batch, the turns of one log being
/// imported) never leave that much.
const IDLE: Duration = Duration::from_millis(1);

/// Pages one merge step writes, about: FTS5 ends a step only between terms, so a step on a
/// level of a large store may run on to finish the doclist of a common word (measured: median
/// step 58 µs, the longest tens of milliseconds at 30,000 episodes). A write that arrives during
/// a step waits for it.
const STEP_PAGES: i64 = 16;

/// Row of the FTS5 structure record in `episodes_fts_data` (`FTS5_STRUCTURE_ROWID`); a step
/// that merged something rewrites it.
const STRUCTURE_ROWID: i64 = 10;

#[derive(Default)]
struct State {
    /// The last commit, when merging may be due.
    last_commit: Option<Instant>,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// Writes begun and not yet ended. A released mutex is not handed to the thread waiting
    /// for it, so without this the merge thread could take the writer back step after step
    /// while a write waits.
    writes: AtomicUsize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The idle-merge thread of one store.
pub(crate) struct IdleMerger {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

impl IdleMerger {
    /// Starts the thread, which merges on `writer` and tells `checkpointer` of its commits.
    ///
    /// # Errors
    /// An internal error when the thread cannot be started.
    pub(crate) fn start(
        writer: Arc<Mutex<Connection>>,
        checkpointer: Arc<Checkpointer>,
        busy_timeout: Duration,
    ) -> Result<IdleMerger> {
        let shared = Arc::new(Shared::default());
        let thread_shared = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("codeoid-merge".to_owned())
            .spawn(move || run(&thread_shared, &writer, &checkpointer, busy_timeout))
            .map_err(|e| Error::internal("cannot start the store's merge thread").with_source(e))?;
        Ok(IdleMerger {
            shared,
            handle: Some(handle),
        })
    }

    /// Called before a write takes the writer; merging stops before its next step until the
    /// returned guard is dropped, after the write.
    pub(crate) fn write_begins(&self) -> WriteGuard<'_> {
        self.shared.writes.fetch_add(1, Ordering::SeqCst);
        WriteGuard {
            shared: &self.shared,
        }
    }

    /// Called after each commit of the writer (merging waits for the writer to be idle again).
    pub(crate) fn after_commit(&self) {
        let mut state = self.shared.lock();
        let was_idle = state.last_commit.is_none();
        state.last_commit = Some(Instant::now());
        drop(state);
        // A thread already counting down to idle reads the new time when it wakes.
        if was_idle {
            self.shared.wake.notify_all();
        }
    }
}

/// A write under way (see [`IdleMerger::write_begins`]).
pub(crate) struct WriteGuard<'m> {
    shared: &'m Shared,
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.shared.writes.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for IdleMerger {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
        if let Some(handle) = self.handle.take() {
            // A panic in the thread has nothing left to clean up; the store is closing anyway.
            let _ = handle.join();
        }
    }
}

fn run(
    shared: &Shared,
    writer: &Mutex<Connection>,
    checkpointer: &Checkpointer,
    busy_timeout: Duration,
) {
    let mut state = shared.lock();
    loop {
        if state.stop {
            return;
        }
        let Some(last) = state.last_commit else {
            state = shared
                .wake
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let idle_for = last.elapsed();
        if idle_for < IDLE {
            state = shared
                .wake
                .wait_timeout(state, IDLE - idle_for)
                .map(|(s, _)| s)
                .unwrap_or_else(|e| e.into_inner().0);
            continue;
        }
        state.last_commit = None;
        drop(state);
        merge_while_idle(shared, writer, checkpointer, busy_timeout);
        state = shared.lock();
    }
}

/// Merge steps until there is nothing to merge, the writer is taken or a commit arrives.
fn merge_while_idle(
    shared: &Shared,
    writer: &Mutex<Connection>,
    checkpointer: &Checkpointer,
    busy_timeout: Duration,
) {
    loop {
        if shared.writes.load(Ordering::SeqCst) > 0 {
            return; // its commit restarts the countdown
        }
        let conn = match writer.try_lock() {
            Ok(conn) => conn,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            // The writer is writing: its commit restarts the countdown.
            Err(TryLockError::WouldBlock) => return,
        };
        let merged = merge_step(&conn, busy_timeout);
        if matches!(merged, Ok(true)) {
            checkpointer.after_commit(&conn);
        }
        drop(conn);
        let state = shared.lock();
        if !matches!(merged, Ok(true)) || state.stop || state.last_commit.is_some() {
            return;
        }
    }
}

/// One `'merge'` step of at most [`STEP_PAGES`] pages in its own transaction; `true` when it
/// merged something.
///
/// # Errors
/// A database error when the step fails (it is rolled back); `Busy` when another process holds
/// the write lock.
fn merge_step(conn: &Connection, busy_timeout: Duration) -> rusqlite::Result<bool> {
    conn.busy_timeout(Duration::ZERO)?;
    let merged = (|| {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let structure = |tx: &Transaction<'_>| {
            tx.prepare_cached("SELECT block FROM episodes_fts_data WHERE id = ?1")?
                .query_row([STRUCTURE_ROWID], |r| r.get::<_, Vec<u8>>(0))
                .optional()
        };
        let before = structure(&tx)?;
        tx.prepare_cached("INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('merge', ?1)")?
            .execute([STEP_PAGES])?;
        let merged = structure(&tx)? != before;
        tx.commit()?;
        Ok(merged)
    })();
    conn.busy_timeout(busy_timeout)?;
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::Turn;
    use crate::store::{NewSession, Store, Workspace, WorkspaceSource};

    /// FTS5 segments holding at least one leaf (`episodes_fts_idx` has rows for each).
    fn segments(conn: &Connection) -> i64 {
        conn.query_row(
            "SELECT count(DISTINCT segid) FROM episodes_fts_idx",
            [],
            |r| r.get(0),
        )
        .unwrap()
    }

    fn ids(store: &Store, ws: &Workspace, query: &str) -> Vec<(String, String)> {
        store
            .lexical_search(ws.id(), query, &Default::default(), 50)
            .unwrap()
            .into_iter()
            .map(|hit| (hit.header.id, format!("{:.9}", hit.bm25)))
            .collect()
    }

    #[test]
    fn steps_merge_segments_until_none_is_left_and_searches_do_not_change() {
        // In memory: no merge thread, so the steps below are the only merging besides FTS5's own.
        let store = Store::open_in_memory().unwrap();
        let ws = Workspace::from_parts("", "/w", "/w", WorkspaceSource::Directory);
        let s = store.create_session(&ws, NewSession::default()).unwrap();
        // One commit each, and each but the first closes the previous prompt's episode: eleven
        // segments, fewer than FTS5's own merges need.
        for i in 0..12 {
            store
                .record_turn(
                    &s.id,
                    &Turn::user_text(format!("prompt {i} about parser{i}")),
                )
                .unwrap();
        }
        let conn = store.writer.lock().unwrap();
        assert_eq!(segments(&conn), 11);
        drop(conn);
        let before = (ids(&store, &ws, "prompt"), ids(&store, &ws, "parser7"));
        assert_eq!(before.0.len(), 11, "{before:?}");
        let conn = store.writer.lock().unwrap();
        let mut steps = 0;
        while merge_step(&conn, Duration::from_secs(5)).unwrap() {
            steps += 1;
            assert!(steps < 100, "merging never ends");
        }
        assert!(steps > 0);
        // `usermerge` (4): no level keeps four segments.
        let after = segments(&conn);
        assert!(after < 4, "{after} segments left");
        assert!(!merge_step(&conn, Duration::from_secs(5)).unwrap());
        drop(conn);
        assert_eq!(
            (ids(&store, &ws, "prompt"), ids(&store, &ws, "parser7")),
            before
        );
    }

    #[test]
    fn a_step_does_not_wait_for_another_process_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("codeoid.db");
        let store = Store::open(&path).unwrap();
        let other = Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let conn = store.writer.lock().unwrap();
        let started = Instant::now();
        let err = merge_step(&conn, Duration::from_secs(5)).unwrap_err();
        assert_eq!(
            err.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy)
        );
        assert!(started.elapsed() < Duration::from_secs(1));
        // The writer's own busy timeout is back.
        other.execute_batch("COMMIT").unwrap();
        conn.execute_batch("BEGIN IMMEDIATE; COMMIT").unwrap();
    }
}
