//! The store's schema, its migrations (`PRAGMA user_version`) and the check that a file is a
//! codeoid store before anything writes to it.
//!
//! Invariants:
//! - A codeoid store carries `PRAGMA application_id = APPLICATION_ID`. A file with another
//!   application id or with tables but no id is another application's database: it is reported
//!   as [`ErrorKind::Corrupt`] and never modified. A file whose `user_version` is above
//!   [`SCHEMA_VERSION`] is reported as [`ErrorKind::SchemaTooNew`] and never modified.
//! - Migrations run in one `BEGIN IMMEDIATE` transaction that re-reads the version, so two
//!   processes opening a new file at once migrate it exactly once.
//! - Version 1 already has every table later features need (vectors, rotation fields, file
//!   hashes). Version 2 adds what replacing a session's tail needs (a log re-imported while it
//!   grows): the chunker state before each turn (`turns.chunker_before`) and, for every episode
//!   the chunker derived, the event that emitted it (`episodes.origin_seq`). Rows written before
//!   version 2 keep `NULL` there. Version 3 adds the `counters` table (the episode key floor);
//!   version 4 moves vectors to a table with row ids (see `V4`); version 5 records where the
//!   current backing context of a session began (see `V5`); version 6 remembers the episodes a
//!   tail replacement removed (see `V6`); version 7 keeps each session's count of assistant turns
//!   since its last rotation (see `V7`).
//!
//! See `docs/store.md` for the tables and what each column means. This module deliberately holds
//! only DDL and version logic; the queries live with their concepts.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::connection::{db_error, open_error};
use crate::error::{Error, ErrorKind, Result};

/// `PRAGMA application_id` of a codeoid store: the ASCII bytes `cdod`.
pub(crate) const APPLICATION_ID: i32 = 0x6364_6f64;

/// The schema version this library writes and understands.
pub const SCHEMA_VERSION: i64 = 7;

/// Migration `i` takes a store from version `i` to `i + 1`.
const MIGRATIONS: [&str; 7] = [V1, V2, V3, V4, V5, V6, V7];

const V1: &str = r"
CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY,
    tenant      TEXT NOT NULL,
    key         TEXT NOT NULL,
    root        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE sessions (
    pk                  INTEGER PRIMARY KEY,
    id                  TEXT NOT NULL UNIQUE,
    workspace_id        TEXT NOT NULL REFERENCES workspaces(id),
    name                TEXT,
    provider            TEXT,
    model               TEXT,
    root                TEXT NOT NULL,
    created_at          INTEGER NOT NULL,
    parent_session_id   TEXT,
    parent_name         TEXT,
    at_turn             INTEGER,
    lineage_kind        TEXT,
    rotation_count      INTEGER NOT NULL DEFAULT 0,
    last_rotation_at    INTEGER,
    backing_context_id  TEXT,
    finished_at         INTEGER,
    last_activity_at    INTEGER NOT NULL,
    turn_count          INTEGER NOT NULL DEFAULT 0,
    -- Rotation bookkeeping (see store/rotation.rs): turn_count when the last rotation happened,
    -- the seed the next message must carry (JSON, taken once) and a per-session window override.
    rotated_at_turn     INTEGER NOT NULL DEFAULT 0,
    context_window      INTEGER,
    pending_seed        TEXT,
    -- Long text last: SQLite reads a row's columns in order.
    first_intent        TEXT,
    chunker_state       TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX sessions_by_workspace ON sessions(workspace_id, created_at);

CREATE TABLE turns (
    pk          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    seq         INTEGER NOT NULL,
    turn_id     TEXT NOT NULL,
    role        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    json        TEXT NOT NULL,
    UNIQUE (session_id, seq),
    UNIQUE (session_id, turn_id)
) STRICT;

CREATE TABLE usage_calls (
    session_id             TEXT NOT NULL REFERENCES sessions(id),
    turn_seq               INTEGER NOT NULL,
    call_index             INTEGER NOT NULL,
    is_primary             INTEGER NOT NULL,
    input_tokens           INTEGER NOT NULL,
    output_tokens          INTEGER NOT NULL,
    cache_read_tokens      INTEGER NOT NULL,
    cache_creation_tokens  INTEGER NOT NULL,
    model                  TEXT,
    request_id             TEXT,
    created_at             INTEGER NOT NULL,
    PRIMARY KEY (session_id, turn_seq, call_index)
) STRICT, WITHOUT ROWID;

CREATE TABLE episodes (
    pk              INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    workspace_id    TEXT NOT NULL REFERENCES workspaces(id),
    session_id      TEXT NOT NULL REFERENCES sessions(id),
    turn_seq        INTEGER NOT NULL,
    kind            TEXT NOT NULL,
    tool_name       TEXT,
    call_id         TEXT,
    status          TEXT NOT NULL,
    summary         TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    token_estimate  INTEGER NOT NULL
) STRICT;

-- Content apart from the rows that lists, filters and joins read: a search touches the row of
-- every match, and kilobytes of content would leave one row per page.
CREATE TABLE episode_contents (
    episode_pk  INTEGER PRIMARY KEY REFERENCES episodes(pk),
    content     TEXT NOT NULL
) STRICT;
CREATE INDEX episodes_timeline ON episodes(workspace_id, created_at);
CREATE INDEX episodes_by_session ON episodes(session_id, created_at);

CREATE TABLE episode_paths (
    episode_pk    INTEGER NOT NULL REFERENCES episodes(pk),
    ord           INTEGER NOT NULL,
    workspace_id  TEXT NOT NULL,
    given         TEXT NOT NULL,
    relative      TEXT NOT NULL,
    access        TEXT NOT NULL,
    content_hash  TEXT,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (episode_pk, ord)
) STRICT, WITHOUT ROWID;
CREATE INDEX episode_paths_by_path ON episode_paths(workspace_id, relative, created_at);

CREATE TABLE raw_blobs (
    id          TEXT PRIMARY KEY,
    len         INTEGER NOT NULL,
    bytes       BLOB NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE episode_blobs (
    episode_pk  INTEGER NOT NULL REFERENCES episodes(pk),
    role        TEXT NOT NULL,
    blob_id     TEXT NOT NULL REFERENCES raw_blobs(id),
    PRIMARY KEY (episode_pk, role)
) STRICT, WITHOUT ROWID;
CREATE INDEX episode_blobs_by_blob ON episode_blobs(blob_id);

CREATE TABLE vectors (
    model       TEXT NOT NULL,
    episode_pk  INTEGER NOT NULL REFERENCES episodes(pk),
    window_index INTEGER NOT NULL,
    dim         INTEGER NOT NULL,
    data        BLOB NOT NULL,
    PRIMARY KEY (model, episode_pk, window_index)
) STRICT, WITHOUT ROWID;

CREATE VIRTUAL TABLE episodes_fts USING fts5(
    summary, content, tool_name,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
-- Document frequencies, so lexical search can skip terms that most episodes contain.
CREATE VIRTUAL TABLE episodes_vocab USING fts5vocab(episodes_fts, 'row');
-- Bigger in-memory batches and less eager merging: fewer, cheaper merges on the write path.
INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('hashsize', 8388608);
INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('automerge', 8);
";

/// Tail replacement: the chunker state each turn was recorded with, and which chunker event
/// (the push of turn `origin_seq`, or a finish before turn `origin_seq`) emitted each derived
/// episode. Episodes nothing derived (rotations, raw outputs, forks) keep `origin_seq` NULL.
const V2: &str = r"
ALTER TABLE turns ADD COLUMN chunker_before TEXT;
ALTER TABLE episodes ADD COLUMN origin_seq INTEGER;
CREATE INDEX episodes_by_origin ON episodes(session_id, origin_seq) WHERE origin_seq IS NOT NULL;
";

/// Episode keys are never reused: replacing a session's tail deletes its newest episodes, and
/// SQLite would hand their keys to the re-derived ones, which the embedding worker (walking keys
/// upward from a cursor) and the in-memory vector index (keyed by them) would take for the old
/// episodes. The floor is the largest key ever deleted; new keys start above it.
const V3: &str = r"
CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
";

/// Vectors move to a table with row ids. Keyed by `(model, episode, window)` in a `WITHOUT
/// ROWID` table, a row lives in an index b-tree, which keeps at most ~1,000 bytes of a row on its
/// page: a 384-dimension vector (1,536 bytes) spilled its last ~560 bytes to an overflow page of
/// its own, and the table took three times its payload (1.5 GB for 0.5 GB of vectors at 100,000
/// episodes, a third of the file). A table b-tree keeps a whole vector on a leaf page, two to a
/// page; the unique index keeps the old key and its probes, and an index by episode serves
/// deleting a replaced tail's vectors (with `model` leading the key, that scanned every vector).
/// The copy ([`move_vectors`], between this and [`V4_END`]) keeps every byte of every vector
/// whose episode exists (with foreign keys on, a vector without one, which only a hand-edited
/// file could hold, would fail the copy and leave the store unopenable). It goes slice by slice,
/// deleting each copied slice before the next, so the file does not grow by a copy of the table.
const V4: &str = r"
ALTER TABLE vectors RENAME TO vectors_v3;
CREATE TABLE vectors (
    model        TEXT NOT NULL,
    episode_pk   INTEGER NOT NULL REFERENCES episodes(pk),
    window_index INTEGER NOT NULL,
    dim          INTEGER NOT NULL,
    data         BLOB NOT NULL,
    UNIQUE (model, episode_pk, window_index)
) STRICT;
";

/// Where a session's current backing context began: the turn count when the seed of its last
/// rotation was taken (the harness builds the fresh context's first message then). Recall leaves
/// out the calling session's episodes from there on, the ones its context holds; before, the
/// turns recorded between a rotation and the harness replacing its context (a tool loop it
/// finished in the old one) counted as live and could not be recalled from the fresh context.
/// `NULL` until a seed is taken: the rotation's own turn is the boundary then, as before.
const V5: &str = r"
ALTER TABLE sessions ADD COLUMN context_started_turn INTEGER;
";

/// Episodes a tail replacement removed, and where each stood in its workspace's timeline: a
/// walk anchored on one (`before`) goes on from there, and reading one says it was replaced
/// (see `replaced`).
const V6: &str = r"
CREATE TABLE replaced_episodes (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    pk           INTEGER NOT NULL,
    replaced_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX replaced_episodes_by_session ON replaced_episodes(session_id);
";

/// The assistant turns each session recorded since its last rotation (those at `seq >=
/// rotated_at_turn`), which the rotation policy reads after every assistant turn. Counting the
/// rows per call read one `turns` row per turn: 20 ms per assistant turn in a session of 40,000
/// turns that never rotated. The write paths keep the count in the transaction that adds or
/// removes turns (see `store::rotation`); the backfill counts what is stored. Not triggers: a
/// statement that fires one takes a savepoint, at which FTS5 writes its pending rows out as a
/// segment, one per turn of a batch.
///
/// Also an index of the episodes no chunker event emitted (rotations, raw outputs, fork markers,
/// and rows from before version 2) by turn: with `episodes_by_origin` it lets recall find where
/// a rotated session's live context starts without reading every episode of the session (see
/// `Store::live_context_start`). The chunker's episodes never need it, so ingest does not pay.
const V7: &str = r"
ALTER TABLE sessions ADD COLUMN assistant_turns_since_rotation INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET assistant_turns_since_rotation = (
    SELECT count(*) FROM turns t
    WHERE t.session_id = sessions.id AND t.seq >= sessions.rotated_at_turn
        AND t.role = 'assistant');
CREATE INDEX episodes_unoriginated ON episodes(session_id, turn_seq) WHERE origin_seq IS NULL;
";

/// The end of version 4, after [`move_vectors`].
const V4_END: &str = r"
DROP TABLE vectors_v3;
CREATE INDEX vectors_by_episode ON vectors(episode_pk);
";

/// Vectors [`move_vectors`] copies per slice (about 400 KiB of them): the file grows by about
/// one slice before deleted pages start being reused.
const V4_SLICE: i64 = 256;

/// Version 4's copy from `vectors_v3` to `vectors`, in key order, one slice at a time: each
/// slice is copied, then deleted from the old table, whose pages the next slice reuses.
fn move_vectors(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    while let Some((model, episode, window)) = slice_end(tx)? {
        let slice = params![model, episode, window];
        tx.execute(
            "INSERT INTO vectors (model, episode_pk, window_index, dim, data)
                 SELECT v.model, v.episode_pk, v.window_index, v.dim, v.data
                 FROM vectors_v3 v JOIN episodes e ON e.pk = v.episode_pk
                 WHERE (v.model, v.episode_pk, v.window_index) <= (?1, ?2, ?3)
                 ORDER BY v.model, v.episode_pk, v.window_index",
            slice,
        )?;
        tx.execute(
            "DELETE FROM vectors_v3 WHERE (model, episode_pk, window_index) <= (?1, ?2, ?3)",
            slice,
        )?;
    }
    Ok(())
}

/// The key of the last vector of the next slice of `vectors_v3`: the [`V4_SLICE`]th in key
/// order, or the last one when fewer are left; `None` when the table is empty.
fn slice_end(tx: &Transaction<'_>) -> rusqlite::Result<Option<(String, i64, i64)>> {
    let key = |r: &rusqlite::Row<'_>| Ok((r.get(0)?, r.get(1)?, r.get(2)?));
    let full = tx
        .query_row(
            "SELECT model, episode_pk, window_index FROM vectors_v3
             ORDER BY model, episode_pk, window_index LIMIT 1 OFFSET ?1",
            [V4_SLICE - 1],
            key,
        )
        .optional()?;
    if full.is_some() {
        return Ok(full);
    }
    tx.query_row(
        "SELECT model, episode_pk, window_index FROM vectors_v3
         ORDER BY model DESC, episode_pk DESC, window_index DESC LIMIT 1",
        [],
        key,
    )
    .optional()
}

/// What [`inspect`] found in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileState {
    /// An empty database (new file): safe to initialize.
    Fresh,
    /// A codeoid store at this version (possibly older, to be migrated).
    Codeoid { version: i64 },
}

/// Reads the file's identity without writing to it.
///
/// # Errors
/// [`ErrorKind::Corrupt`] for a non-SQLite file or another application's database,
/// [`ErrorKind::SchemaTooNew`] for a store from a newer codeoid.
pub(crate) fn inspect(conn: &Connection, path: &Path) -> Result<FileState> {
    let read = |sql: &str| -> Result<i64> {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map_err(|e| open_error(path, e))
    };
    let application_id = read("PRAGMA application_id")?;
    let version = read("PRAGMA user_version")?;
    let objects = read("SELECT count(*) FROM sqlite_schema")?;
    let shown = path.display();
    if application_id == i64::from(APPLICATION_ID) {
        if version > SCHEMA_VERSION {
            return Err(Error::new(
                ErrorKind::SchemaTooNew,
                format!(
                    "store {shown} has schema version {version} but this codeoid understands up \
                     to {SCHEMA_VERSION}; upgrade codeoid (the file was left untouched)"
                ),
            ));
        }
        return Ok(FileState::Codeoid { version });
    }
    if application_id == 0 && version == 0 && objects == 0 {
        return Ok(FileState::Fresh);
    }
    Err(Error::new(
        ErrorKind::Corrupt,
        format!(
            "{shown} is an SQLite database of another application (application_id \
             {application_id}, user_version {version}, {objects} schema objects); it was left \
             untouched, open the store at another path"
        ),
    ))
}

/// Brings the store to [`SCHEMA_VERSION`], creating it when fresh.
///
/// # Errors
/// [`ErrorKind::SchemaTooNew`] when another process upgraded the file meanwhile, or a database
/// error when a migration fails (the transaction is rolled back, nothing changes).
pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| db_error("cannot start the schema migration", e))?;
    let version: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| db_error("cannot read the schema version", e))?;
    if version > SCHEMA_VERSION {
        return Err(Error::new(
            ErrorKind::SchemaTooNew,
            format!(
                "store has schema version {version} but this codeoid understands up to \
                 {SCHEMA_VERSION}; upgrade codeoid"
            ),
        ));
    }
    for (from, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        tx.execute_batch(sql)
            .and_then(|()| {
                if from == 3 {
                    move_vectors(&tx).and_then(|()| tx.execute_batch(V4_END))
                } else {
                    Ok(())
                }
            })
            .map_err(|e| db_error(&format!("cannot migrate the store from version {from}"), e))?;
    }
    if version < SCHEMA_VERSION {
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .and_then(|()| tx.pragma_update(None, "user_version", SCHEMA_VERSION))
            .map_err(|e| db_error("cannot record the schema version", e))?;
    }
    tx.commit()
        .map_err(|e| db_error("cannot commit the schema migration", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_database_migrates_once_and_is_recognized() {
        let mut conn = Connection::open_in_memory().unwrap();
        let path = Path::new(":memory:");
        assert_eq!(inspect(&conn, path).unwrap(), FileState::Fresh);
        migrate(&mut conn).unwrap();
        assert_eq!(
            inspect(&conn, path).unwrap(),
            FileState::Codeoid {
                version: SCHEMA_VERSION
            }
        );
        // Running again is a no-op, not a "table exists" failure.
        migrate(&mut conn).unwrap();
    }

    #[test]
    fn a_version_1_store_gains_the_tail_replacement_columns() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(V1).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        assert_eq!(
            inspect(&conn, Path::new(":memory:")).unwrap(),
            FileState::Codeoid { version: 1 }
        );
        migrate(&mut conn).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        for (table, column) in [
            ("turns", "chunker_before"),
            ("episodes", "origin_seq"),
            ("sessions", "context_started_turn"),
        ] {
            let found: i64 = conn
                .query_row(
                    "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
                    [table, column],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(found, 1, "{table}.{column}");
        }
    }

    /// An in-memory store at version 3 with foreign keys off: episodes without sessions or
    /// workspaces, and vectors without episodes, for tests about the vectors table.
    fn version_3_store() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", false).unwrap();
        for sql in [V1, V2, V3] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", 3).unwrap();
        conn
    }

    /// Inserts a bare episode row with key `pk`.
    fn insert_episode(conn: &Connection, pk: i64) {
        conn.execute(
            "INSERT INTO episodes (pk, id, workspace_id, session_id, turn_seq, kind, status,
                 summary, created_at, token_estimate)
             VALUES (?1, 'ep_' || ?1, 'ws', 'ses', 0, 'tool_call', 'ok', 's', 0, 1)",
            [pk],
        )
        .unwrap();
    }

    /// A 384-dimension f32 vector's bytes, distinct per `seed`.
    fn vector_bytes(seed: usize) -> Vec<u8> {
        (0..384)
            .flat_map(|i| ((seed * 384 + i) as f32).to_le_bytes())
            .collect()
    }

    #[test]
    fn a_version_3_stores_vectors_move_byte_for_byte_to_a_rowid_table() {
        let mut conn = version_3_store();
        for pk in 10..13 {
            insert_episode(&conn, pk);
        }
        let rows: Vec<(String, i64, i64, i64, Vec<u8>)> = (0..6)
            .map(|i| {
                let model = if i % 2 == 0 { "minilm@1" } else { "bge@2" };
                (
                    model.to_owned(),
                    10 + i as i64 / 2,
                    i as i64 % 2,
                    384,
                    vector_bytes(i),
                )
            })
            .collect();
        for row in &rows {
            conn.execute(
                "INSERT INTO vectors (model, episode_pk, window_index, dim, data)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![row.0, row.1, row.2, row.3, row.4],
            )
            .unwrap();
        }
        let read = |conn: &Connection| -> Vec<(String, i64, i64, i64, Vec<u8>)> {
            conn.prepare(
                "SELECT model, episode_pk, window_index, dim, data FROM vectors
                 ORDER BY model, episode_pk, window_index",
            )
            .unwrap()
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
        };
        let before = read(&conn);
        assert_eq!(before.len(), rows.len());
        // A vector whose episode is gone (possible only in a hand-edited file) is not copied,
        // rather than failing the migration and leaving the store unopenable.
        conn.execute(
            "INSERT INTO vectors (model, episode_pk, window_index, dim, data)
             VALUES ('minilm@1', 99, 0, 384, ?1)",
            [vector_bytes(99)],
        )
        .unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(read(&conn), before);
        let plan: String = conn
            .query_row(
                "EXPLAIN QUERY PLAN DELETE FROM vectors WHERE episode_pk IN (10, 11)",
                [],
                |r| r.get(3),
            )
            .unwrap();
        assert!(plan.contains("INDEX vectors_by_episode"), "{plan}");
        let without_rowid: i64 = conn
            .query_row(
                "SELECT wr FROM pragma_table_list WHERE name = 'vectors'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(without_rowid, 0);
        // The key stays unique.
        let dup = conn.execute(
            "INSERT INTO vectors (model, episode_pk, window_index, dim, data)
             VALUES ('bge@2', 10, 1, 384, x'00')",
            [],
        );
        assert!(dup.is_err());
    }

    #[test]
    fn a_large_vectors_table_moves_in_slices_without_growing_the_file() {
        let mut conn = version_3_store();
        let tx = conn.transaction().unwrap();
        // Episodes 1..=2500 except every 500th: vectors of the missing ones (and of 2501..=2600)
        // are orphans, in several slices and at the end.
        for pk in (1..=2500).filter(|pk| pk % 500 != 0) {
            insert_episode(&tx, pk);
        }
        let mut expected = Vec::new();
        for (model, pks, windows) in [("a@1", 1..=2600, 2), ("b@2", 1..=1000, 1)] {
            for pk in pks {
                for window in 0..windows {
                    let data = vector_bytes(pk as usize * 2 + window as usize);
                    tx.execute(
                        "INSERT INTO vectors (model, episode_pk, window_index, dim, data)
                         VALUES (?1, ?2, ?3, 384, ?4)",
                        rusqlite::params![model, pk, window, data],
                    )
                    .unwrap();
                    if pk <= 2500 && pk % 500 != 0 {
                        expected.push((model.to_owned(), pk, window, data));
                    }
                }
            }
        }
        tx.commit().unwrap();
        assert!(expected.len() > 2 * V4_SLICE as usize);
        let pages = |conn: &Connection| -> i64 {
            conn.query_row("PRAGMA page_count", [], |r| r.get(0))
                .unwrap()
        };
        let before = pages(&conn);
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        migrate(&mut conn).unwrap();
        let moved: Vec<(String, i64, i64, Vec<u8>)> = conn
            .prepare(
                "SELECT model, episode_pk, window_index, data FROM vectors
                 ORDER BY model, episode_pk, window_index",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(moved, expected);
        // Each slice reuses the pages of the one deleted before it. Copied whole, the new table
        // (about 3,000 pages) would have come on top of the old one.
        let after = pages(&conn);
        assert!(
            after <= before + 300,
            "{before} pages before, {after} after"
        );
    }

    #[test]
    fn a_vector_takes_half_a_page_not_an_overflow_page() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", false).unwrap();
        migrate(&mut conn).unwrap();
        let pages = |conn: &Connection| -> i64 {
            conn.query_row("PRAGMA page_count", [], |r| r.get(0))
                .unwrap()
        };
        let start = pages(&conn);
        let tx = conn.transaction().unwrap();
        for i in 0..1000 {
            tx.execute(
                "INSERT INTO vectors (model, episode_pk, window_index, dim, data)
                 VALUES ('minilm@1', ?1, 0, 384, ?2)",
                rusqlite::params![i, vector_bytes(i as usize)],
            )
            .unwrap();
        }
        tx.commit().unwrap();
        // 1,536 bytes each: two to a 4 KiB page, plus the key index. Kept in an index b-tree, each
        // row spilled to an overflow page of its own (1,143 pages for these 1,000).
        let used = pages(&conn) - start;
        assert!(used < 600, "{used} pages for 1,000 vectors");
    }

    #[test]
    fn version_7_counts_each_sessions_assistant_turns_since_its_rotation() {
        let mut conn = Connection::open_in_memory().unwrap();
        for sql in [V1, V2, V3, V4, V4_END, V5, V6] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", 6).unwrap();
        conn.execute(
            "INSERT INTO workspaces (id, tenant, key, root, created_at) VALUES ('ws', '', 'k', '/w', 0)",
            [],
        )
        .unwrap();
        // `rotated` rotated at turn 3 of its 7; `fresh` never rotated.
        for (id, rotated_at_turn, turns) in [("rotated", 3, 7), ("fresh", 0, 4)] {
            conn.execute(
                "INSERT INTO sessions (id, workspace_id, root, created_at, last_activity_at,
                     turn_count, rotated_at_turn)
                 VALUES (?1, 'ws', '/w', 0, 0, ?2, ?3)",
                params![id, turns, rotated_at_turn],
            )
            .unwrap();
            for seq in 0..turns {
                let role = if seq % 2 == 1 { "assistant" } else { "user" };
                insert_turn(&conn, id, seq, role);
            }
        }
        migrate(&mut conn).unwrap();
        let since = |id: &str| -> i64 {
            conn.query_row(
                "SELECT assistant_turns_since_rotation FROM sessions WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
        };
        // Assistant turns at seq 3 and 5; at 1 and 3.
        assert_eq!((since("rotated"), since("fresh")), (2, 2));
    }

    /// Inserts turn `seq` of session `id` with `role` and an empty JSON body.
    fn insert_turn(conn: &Connection, id: &str, seq: i64, role: &str) {
        conn.execute(
            "INSERT INTO turns (session_id, seq, turn_id, role, created_at, json)
             VALUES (?1, ?2, 't' || ?2, ?3, 0, '{}')",
            params![id, seq, role],
        )
        .unwrap();
    }

    #[test]
    fn foreign_and_newer_databases_are_refused() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE notes(x)").unwrap();
        let err = inspect(&conn, Path::new("/tmp/app.db")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt);
        assert!(err.message().contains("another application"), "{err}");

        let conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        let err = inspect(&conn, Path::new("/tmp/new.db")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::SchemaTooNew);
        let newer = format!("version {}", SCHEMA_VERSION + 1);
        assert!(err.message().contains(&newer), "{err}");
    }
}
