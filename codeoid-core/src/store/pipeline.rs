//! Appending a batch of turns on two cores: one thread prepares the turns (serialization,
//! chunking, content caps, FTS text, path hashes; see `prepared`) while the writer, inside its
//! transaction, writes the rows of those already prepared.
//!
//! Invariants:
//! - The rows written, and their order, are those of appending the turns one by one: the
//!   preparing thread advances the same tip in the same order, and only the writer touches the
//!   database, on its own thread, in the caller's transaction.
//! - Prepared turns are handed over in chunks of [`CHUNK`] turns or [`CHUNK_BYTES`], whichever
//!   comes first, so the threads wake each other once per chunk, not once per turn (a wake-up
//!   costs about what preparing a turn does), and the preparing thread runs at most [`DEPTH`]
//!   chunks ahead: what waits for the writer is bounded by the channel (about [`DEPTH`] + 2
//!   chunks alive at once, each about [`CHUNK_BYTES`] of turns and contents, plus the FTS text
//!   and one turn's overshoot), not by the batch.
//! - Written rows are freed on the thread that allocated them: the writer hands each chunk back
//!   once written. Freed on the writer, every free took the preparing thread's malloc arena
//!   lock, and the two threads spent most of their switches waiting on it (glibc). Chunks still
//!   queued when a batch fails are freed by the writer; that path is not the fast one.
//! - A failure on either side stops both: the writer returns the first error (the caller's
//!   transaction then rolls back) and the preparing thread stops once the chunk it is preparing
//!   is done. A panic of the preparing thread resumes on the caller's thread, as it would have in
//!   line; a panic of the writer drops its ends of the channels first, so the preparing thread
//!   ends and the scope can join it.
//! - Small batches, and any batch when a thread cannot be started, are appended in line: a
//!   thread costs tens of microseconds, a turn a few.
//! - A long batch runs with the writer's larger batch page cache
//!   ([`connection::BATCH_CACHE_KIB`]), which is set back to the one-turn size when it ends.

use std::sync::mpsc;
use std::thread;

use rusqlite::Transaction;

use super::connection;
use super::prepared::PreparedTurn;
use super::record::{Recorded, Tip, write_turn};
use super::sessions::Session;
use super::{Store, StoreOptions};
use crate::canonical::Turn;
use crate::error::{Error, Result};

/// Fewest turns a batch needs to be prepared on a second thread.
const MIN_TURNS: usize = 64;

/// Most prepared turns handed to the writer at once.
const CHUNK: usize = 64;

/// Prepared bytes (turn JSON and episode contents) past which a chunk is handed over early.
const CHUNK_BYTES: usize = 1024 * 1024;

/// Most chunks waiting for the writer.
const DEPTH: usize = 32;

/// Prepared turns handed over at once, and the failure that ended the batch after them.
struct Chunk {
    turns: Vec<PreparedTurn>,
    failure: Option<Error>,
}

/// Prepares turns from the front of `turns`, in order, until the chunk is full or one fails;
/// returns the chunk and how many turns it took.
fn prepare_chunk(
    tip: &mut Tip,
    session: &Session,
    options: &StoreOptions,
    turns: &[&Turn],
) -> (Chunk, usize) {
    let mut chunk = Chunk {
        turns: Vec::with_capacity(CHUNK.min(turns.len())),
        failure: None,
    };
    let mut bytes = 0;
    for turn in turns.iter().take(CHUNK) {
        match tip.prepare(session, options, turn) {
            Ok(prepared) => {
                bytes += prepared.json.len()
                    + prepared
                        .episodes
                        .iter()
                        .map(|e| e.episode.content.len())
                        .sum::<usize>();
                chunk.turns.push(prepared);
            }
            Err(e) => {
                chunk.failure = Some(e);
                break;
            }
        }
        if bytes >= CHUNK_BYTES {
            break;
        }
    }
    let taken = chunk.turns.len();
    (chunk, taken)
}

impl Tip {
    /// Appends `turns` in order, as [`Tip::append`] of each would; on two threads when the batch
    /// is large enough. The caller has ruled out known ids.
    pub(crate) fn append_all(
        &mut self,
        tx: &Transaction<'_>,
        store: &Store,
        session: &Session,
        turns: &[&Turn],
    ) -> Result<Vec<Recorded>> {
        if turns.len() < MIN_TURNS {
            return turns
                .iter()
                .map(|turn| self.append(tx, store, session, turn))
                .collect();
        }
        // The cache only changes speed, so failing to resize it changes nothing else.
        let _ = tx.pragma_update(None, "cache_size", connection::BATCH_CACHE_KIB);
        let appended = self.append_prepared_ahead(tx, store, session, turns);
        let _ = tx.pragma_update(None, "cache_size", connection::WRITER_CACHE_KIB);
        appended
    }

    /// [`Tip::append_all`] of a long batch: prepared on a second thread, written on this one.
    fn append_prepared_ahead(
        &mut self,
        tx: &Transaction<'_>,
        store: &Store,
        session: &Session,
        turns: &[&Turn],
    ) -> Result<Vec<Recorded>> {
        let options = store.options();
        // The preparing thread borrows the tip; if it cannot start, the batch runs in line.
        let tip = &mut *self;
        let outcome = thread::scope(|scope| {
            let (sender, receiver) = mpsc::sync_channel::<Chunk>(DEPTH);
            // Written chunks go back to be freed where they were allocated (see the invariants).
            let (written_sender, written_receiver) = mpsc::channel::<Chunk>();
            let preparer = thread::Builder::new()
                .name("codeoid-prepare".to_owned())
                .spawn_scoped(scope, move || {
                    let mut rest = turns;
                    while !rest.is_empty() {
                        let (chunk, taken) = prepare_chunk(tip, session, options, rest);
                        rest = &rest[taken..];
                        let failed = chunk.failure.is_some();
                        if sender.send(chunk).is_err() || failed {
                            break;
                        }
                        written_receiver.try_iter().for_each(drop);
                    }
                    drop(sender);
                    written_receiver.iter().for_each(drop);
                });
            let Ok(preparer) = preparer else {
                return None;
            };
            let mut recorded = Vec::with_capacity(turns.len());
            let written = receiver.iter().try_for_each(|mut chunk| {
                for prepared in &chunk.turns {
                    recorded.push(write_turn(tx, session, prepared)?);
                }
                if let Some(failure) = chunk.failure.take() {
                    return Err(failure);
                }
                // The preparing thread may have ended (it drains the rest at its end).
                let _ = written_sender.send(chunk);
                Ok(())
            });
            // A writer that stopped early must let the preparing thread see it before waiting.
            drop(receiver);
            drop(written_sender);
            if let Err(panic) = preparer.join() {
                std::panic::resume_unwind(panic);
            }
            Some(written.map(|()| recorded))
        });
        match outcome {
            Some(written) => written,
            None => turns
                .iter()
                .map(|turn| self.append(tx, store, session, turn))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewSession, Workspace, WorkspaceSource};

    fn writer_cache_kib(store: &Store) -> i64 {
        store
            .write("read the cache size", |tx| {
                tx.query_row("PRAGMA cache_size", [], |r| r.get(0))
                    .map_err(|e| connection::db_error("read the cache size", e))
            })
            .unwrap()
    }

    #[test]
    fn a_long_batch_gives_the_writer_its_one_turn_cache_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("codeoid.db")).unwrap();
        let ws = Workspace::from_parts("", "/w", "/w", WorkspaceSource::Directory);
        let session = store.create_session(&ws, NewSession::default()).unwrap();
        assert_eq!(writer_cache_kib(&store), connection::WRITER_CACHE_KIB);
        let turns: Vec<Turn> = (0..2 * MIN_TURNS)
            .map(|i| match i % 2 {
                0 => Turn::user_text(format!("prompt {i}")),
                _ => Turn::assistant_text(format!("answer {i}")),
            })
            .collect();
        let recorded = store.record_turns(&session.id, &turns).unwrap();
        assert_eq!(recorded.len(), turns.len());
        assert_eq!(writer_cache_kib(&store), connection::WRITER_CACHE_KIB);
        assert_ne!(connection::WRITER_CACHE_KIB, connection::BATCH_CACHE_KIB);

        // A batch that fails halfway gives it back too.
        let raw = rusqlite::Connection::open(dir.path().join("codeoid.db")).unwrap();
        raw.execute_batch(
            "CREATE TRIGGER refuse_turn BEFORE INSERT ON turns WHEN NEW.seq = 200
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
        )
        .unwrap();
        assert!(store.record_turns(&session.id, &turns).is_err());
        assert_eq!(writer_cache_kib(&store), connection::WRITER_CACHE_KIB);
    }
}
