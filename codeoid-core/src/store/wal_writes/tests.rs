//! Tests of the WAL write layer on real files: what reaches the file system, what other
//! connections and a recovery from the files alone see.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, params};

use super::*;

/// A connection to `path` through this layer, in WAL mode with automatic checkpoints off (so
/// the WAL keeps every frame the test writes).
fn layered(path: &Path) -> Connection {
    layered_uri(&path.display().to_string())
}

/// [`layered`] for a file name that may be a `file:` URI.
fn layered_uri(name: &str) -> Connection {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags_and_vfs(name, flags, vfs_name().expect("registered"))
        .expect("opens through the layer");
    conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
        .expect("WAL");
    conn.pragma_update(None, "wal_autocheckpoint", 0)
        .expect("no automatic checkpoint");
    conn.execute_batch("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        .expect("table");
    conn
}

/// A distinct, incompressible-looking value for key `k`.
fn value(k: i64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (k as usize).wrapping_mul(31).wrapping_add(i * 7) as u8)
        .collect()
}

/// Inserts row `k` holding [`value`]`(k, len)`.
fn insert(conn: &Connection, k: i64, len: usize) {
    conn.execute("INSERT INTO t VALUES (?1, ?2)", params![k, value(k, len)])
        .unwrap();
}

fn rows(conn: &Connection) -> Vec<(i64, Vec<u8>)> {
    let mut stmt = conn.prepare("SELECT k, v FROM t ORDER BY k").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn integrity(conn: &Connection) -> String {
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_commit_of_many_pages_reaches_the_wal_file_in_one_write() {
    let dir = tempfile::tempdir().unwrap();
    let conn = layered(&dir.path().join("s.db"));
    // A first commit writes the WAL header too.
    conn.execute("INSERT INTO t VALUES (0, x'00')", []).unwrap();
    let before = observe(|_| {});
    let tx = conn.unchecked_transaction().unwrap();
    for k in 1..=12 {
        insert(&tx, k, 3000);
    }
    tx.commit().unwrap();
    let after = observe(|_| {});
    let (asked, made) = (after.asked - before.asked, after.made - before.made);
    // Each page is a header write and a page write; 36 KB of rows span at least 9 pages.
    assert!(asked >= 18, "SQLite asked for {asked} WAL writes");
    assert_eq!(made, 1, "{asked} WAL writes reached the file as {made}");
}

#[test]
fn another_connection_on_the_default_vfs_sees_each_commit_as_it_is_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let writer = layered(&path);
    let reader = Connection::open(&path).expect("default VFS");
    let mut expected = Vec::new();
    for k in 0..40 {
        let tx = writer.unchecked_transaction().unwrap();
        insert(&tx, k, 5000);
        if k % 7 == 3 {
            // Rewrites pages an earlier commit wrote: frames for pages already in the WAL.
            tx.execute(
                "UPDATE t SET v = ?2 WHERE k = ?1",
                params![k - 2, value(-k, 5000)],
            )
            .unwrap();
            expected[k as usize - 2] = (k - 2, value(-k, 5000));
        }
        tx.commit().unwrap();
        expected.push((k, value(k, 5000)));
        assert_eq!(rows(&reader), expected, "after commit {k}");
    }
    assert_eq!(integrity(&reader), "ok");
    assert_eq!(
        observe(|_| {}).late,
        0,
        "every commit went out with its last frame"
    );
}

#[test]
fn commits_padded_to_a_sector_for_a_sync_go_out_before_they_are_published() {
    // Without power-safe overwrite, `synchronous = FULL` pads each commit with copies of its
    // last frame up to a sector boundary, splitting the frame that crosses it around a sync.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let writer = layered_uri(&format!("file:{}?psow=0", path.display()));
    writer.pragma_update(None, "synchronous", "FULL").unwrap();
    let reader = Connection::open(&path).expect("default VFS");
    let before = observe(|_| {});
    let mut expected = Vec::new();
    for k in 0..12 {
        let tx = writer.unchecked_transaction().unwrap();
        insert(&tx, k, 3000 + 700 * k as usize);
        tx.commit().unwrap();
        expected.push((k, value(k, 3000 + 700 * k as usize)));
        assert_eq!(rows(&reader), expected, "after commit {k}");
    }
    let after = observe(|_| {});
    assert_eq!(after.late, before.late, "nothing left for the second guard");
    assert_eq!(integrity(&reader), "ok");
}

#[test]
fn padding_split_at_any_point_of_a_frame_goes_out_before_it_is_published() {
    // Small pages against 4 KiB sectors move the sector boundary through every part of a frame
    // over a few hundred frames; zero-filled pages make a 24-byte piece of a page look like a
    // frame header that commits nothing.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let name = format!("file:{}?psow=0", path.display());
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI;
    let layered = Connection::open_with_flags_and_vfs(&name, flags, vfs_name().unwrap()).unwrap();
    layered.pragma_update(None, "page_size", 1024).unwrap();
    layered
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
        .unwrap();
    layered
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    layered.pragma_update(None, "synchronous", "FULL").unwrap();
    layered
        .execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        .unwrap();
    let page_size: i64 = layered
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    assert_eq!(page_size, 1024);
    let before = observe(|_| {});
    for k in 0..300_i64 {
        let blob = if k % 2 == 0 {
            "zeroblob(3000)"
        } else {
            "zeroblob(700) || randomblob(9)"
        };
        layered
            .execute(
                &format!("INSERT OR REPLACE INTO t VALUES (?1, {blob})"),
                params![k % 40],
            )
            .unwrap();
    }
    let after = observe(|_| {});
    assert!(
        after.asked - before.asked > 1_000,
        "{} WAL writes",
        after.asked - before.asked
    );
    assert_eq!(after.late, before.late, "nothing left for the second guard");
    let reader = Connection::open(&path).expect("default VFS");
    assert_eq!(integrity(&reader), "ok");
    let count: i64 = reader
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 40);
}

#[test]
fn a_failed_write_of_rolled_back_frames_still_releases_the_write_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let conn = layered(&path);
    conn.execute("INSERT INTO t VALUES (0, x'00')", []).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    conn.pragma_update(None, "cache_size", 10).unwrap();
    // One statement that spills its frames, then a rollback that reads nothing back: the
    // spilled frames are still buffered when the write lock is released.
    conn.execute_batch(
        "BEGIN;
         WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
         INSERT INTO t SELECT i, randomblob(2000) FROM c;",
    )
    .unwrap();
    let before = observe(|o| o.fail_writes = true);
    let _ = conn.execute_batch("ROLLBACK");
    let after = observe(|o| o.fail_writes = false);
    assert!(
        after.late > before.late,
        "the rolled-back frames were written at the unlock"
    );
    let other = Connection::open(&path).expect("default VFS");
    other
        .execute("INSERT INTO t VALUES (5, x'05')", [])
        .expect("the write lock was released");
    assert_eq!(rows(&other), vec![(0, vec![0u8]), (5, vec![5u8])]);
    assert_eq!(integrity(&other), "ok");
}

#[test]
fn a_transaction_that_outgrows_the_page_cache_spills_and_commits_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let conn = layered(&path);
    // Ten pages of cache: the transaction's dirty pages spill to the WAL before it commits, are
    // read back from there, and rewritten in place (the checksum rewrite at commit).
    conn.pragma_update(None, "cache_size", 10).unwrap();
    let tx = conn.unchecked_transaction().unwrap();
    let mut expected = Vec::new();
    for k in 0..400 {
        insert(&tx, k, 2000);
        expected.push((k, value(k, 2000)));
    }
    assert_eq!(
        rows(&tx),
        expected,
        "spilled pages read back in the transaction"
    );
    for k in (0..400).step_by(3) {
        tx.execute(
            "UPDATE t SET v = ?2 WHERE k = ?1",
            params![k, value(k + 1000, 2000)],
        )
        .unwrap();
        expected[k as usize] = (k, value(k + 1000, 2000));
    }
    tx.commit().unwrap();

    // What a crash leaves: the database and WAL files as they are now, recovered by a
    // connection that has only them (no shared memory), through the default VFS.
    let copy = tempfile::tempdir().unwrap();
    for suffix in ["", "-wal"] {
        std::fs::copy(
            format!("{}{suffix}", path.display()),
            copy.path().join(format!("s.db{suffix}")),
        )
        .unwrap();
    }
    let recovered = Connection::open(copy.path().join("s.db")).unwrap();
    assert_eq!(rows(&recovered), expected);
    assert_eq!(integrity(&recovered), "ok");
    assert_eq!(rows(&conn), expected);
}

#[test]
fn a_rolled_back_transaction_leaves_the_committed_rows_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let conn = layered(&path);
    conn.pragma_update(None, "cache_size", 10).unwrap();
    conn.execute("INSERT INTO t VALUES (1, x'01')", []).unwrap();
    {
        let tx = conn.unchecked_transaction().unwrap();
        for k in 2..300 {
            insert(&tx, k, 2000);
        }
        // Dropped: rolled back after spilling frames to the WAL.
    }
    conn.execute("INSERT INTO t VALUES (2, x'02')", []).unwrap();
    let other = Connection::open(&path).unwrap();
    let expected = vec![(1, vec![1u8]), (2, vec![2u8])];
    assert_eq!(rows(&other), expected);
    assert_eq!(rows(&conn), expected);
    assert_eq!(integrity(&other), "ok");
}

#[test]
fn a_file_that_cannot_be_opened_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no such directory").join("s.db");
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let err = Connection::open_with_flags_and_vfs(&missing, flags, vfs_name().unwrap())
        .expect_err("a missing directory cannot hold a new file");
    assert_eq!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::CannotOpen)
    );
}
