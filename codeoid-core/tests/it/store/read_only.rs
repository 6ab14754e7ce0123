//! Reading a store without write access (`Store::open_read_only`): a folder nothing may write,
//! a file that may not be written, a WAL left with commits, and paths that hold no store.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::{Duration, Instant};

use codeoid_core::ErrorKind;
use codeoid_core::canonical::Turn;
use codeoid_core::store::{
    LexicalFilters, Store, StoreOptions, TimelineQuery, schema::SCHEMA_VERSION,
};
use serde_json::json;

use super::faults::spawn_child;
use super::{Unwritable, at, call, result, session, workspace};

/// Records one exchange with a tool call in a new session of workspace `/w`: a prompt, a
/// `grep` call, its result naming `needle_word`, an answer. Returns the session id.
fn exchange(store: &Store, needle_word: &str) -> String {
    let s = session(store, &workspace("/w"), "s", 0);
    store
        .record_turns(
            &s.id,
            &[
                at(Turn::user_text("find the parser bug"), "u1", 1),
                at(
                    call("c1", "Bash", json!({"command": "grep -rn parse"})),
                    "a1",
                    2,
                ),
                at(
                    result("c1", &format!("src/parse.rs:9 {needle_word}"), false),
                    "r1",
                    3,
                ),
                at(Turn::assistant_text("fixed"), "a2", 4),
            ],
        )
        .unwrap();
    s.id
}

/// Every file in `dir`, sorted, with its length and a hash of its bytes (so a failed comparison
/// prints something readable).
fn files(dir: &Path) -> Vec<(String, usize, u64)> {
    use std::hash::{Hash, Hasher};
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = std::fs::read(e.path()).unwrap();
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut hasher);
            (
                e.file_name().to_string_lossy().into_owned(),
                bytes.len(),
                hasher.finish(),
            )
        })
        .collect();
    all.sort();
    all
}

/// Checks that `store` reads what [`exchange`] recorded, and refuses to write.
fn reads_everything_and_writes_nothing(store: &Store, session_id: &str) {
    let ws = workspace("/w");
    assert!(store.is_read_only());
    assert_eq!(store.sessions(ws.id()).unwrap().len(), 1);
    assert_eq!(store.turns(session_id, ..).unwrap().len(), 4);
    let page = store.timeline(ws.id(), &TimelineQuery::default()).unwrap();
    let call = page
        .episodes
        .iter()
        .find(|e| e.tool_name.as_deref() == Some("Bash"))
        .expect("the tool call's episode");
    let episode = store.episode(ws.id(), &call.id).unwrap();
    assert!(
        episode.content.contains("quuxification"),
        "{}",
        episode.content
    );
    let hits = store
        .lexical_search(ws.id(), "quuxification", &LexicalFilters::default(), 5)
        .unwrap();
    assert_eq!(hits[0].header.id, call.id);

    let err = store
        .record_turn(session_id, &Turn::user_text("more"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{}", err.full_message());
    assert!(err.message().contains("opened read-only"), "{err}");
    let err = store.finish_session(session_id).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{}", err.full_message());
}

#[test]
fn a_store_in_a_folder_nothing_may_write_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("ro");
    std::fs::create_dir(&folder).unwrap();
    let path = folder.join("codeoid.db");
    let session_id = {
        let store = Store::open(&path).unwrap();
        exchange(&store, "quuxification")
    };
    let before = files(&folder);
    assert_eq!(before.len(), 1, "a closed store is one file");
    let Some(guard) = Unwritable::new(&folder) else {
        eprintln!("cannot make a folder read-only in this environment; skipping");
        return;
    };
    assert_eq!(Store::open(&path).err().unwrap().kind(), ErrorKind::Io);

    let store = Store::open_read_only(&path).unwrap();
    reads_everything_and_writes_nothing(&store, &session_id);
    drop(store);
    drop(guard);
    assert_eq!(files(&folder), before, "nothing written, nothing created");
}

#[test]
fn a_read_only_store_sees_what_a_writer_commits_after_it_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codeoid.db");
    let writer = Store::open(&path).unwrap();
    let session_id = exchange(&writer, "quuxification");
    let Some(_guard) = Unwritable::new(&path) else {
        eprintln!("cannot make a file read-only in this environment; skipping");
        return;
    };
    let reader = Store::open_read_only(&path).unwrap();
    reads_everything_and_writes_nothing(&reader, &session_id);

    writer
        .record_turn(&session_id, &at(Turn::user_text("zymurgy next"), "u2", 5))
        .unwrap();
    let turns = reader.turns(&session_id, ..).unwrap();
    assert_eq!(turns.len(), 5);
    assert_eq!(turns[4].turn.text(), "zymurgy next");
}

#[test]
fn a_wal_holding_commits_where_no_index_can_be_created_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.db");
    let store = Store::open(&live).unwrap();
    let session_id = exchange(&store, "quuxification");
    let wal_of =
        |p: &Path| p.with_file_name(format!("{}-wal", p.file_name().unwrap().to_string_lossy()));
    assert!(std::fs::metadata(wal_of(&live)).unwrap().len() > 0);

    // The store's files as a killed writer leaves them: a WAL with commits, no -shm.
    let folder = dir.path().join("copy");
    std::fs::create_dir(&folder).unwrap();
    let copy = folder.join("codeoid.db");
    std::fs::copy(&live, &copy).unwrap();
    std::fs::copy(wal_of(&live), wal_of(&copy)).unwrap();
    let before = files(&folder);
    let Some(guard) = Unwritable::new(&folder) else {
        eprintln!("cannot make a folder read-only in this environment; skipping");
        return;
    };
    let err = Store::open_read_only(&copy).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Io, "{}", err.full_message());
    assert!(err.message().contains("codeoid.db-wal"), "{err}");
    assert!(err.message().contains("write access"), "{err}");
    drop(guard);
    assert_eq!(files(&folder), before);

    // A read-only open creates no index even where it could; a writing open recovers the WAL.
    let err = Store::open_read_only(&copy).err().unwrap();
    assert!(err.message().contains("codeoid.db-wal"), "{err}");
    assert_eq!(files(&folder), before);
    let recovered = Store::open(&copy).unwrap();
    assert_eq!(recovered.turns(&session_id, ..).unwrap().len(), 4);
}

#[test]
fn a_read_only_open_creates_nothing_beside_the_store_even_where_it_could() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codeoid.db");
    let session_id = exchange(&Store::open(&path).unwrap(), "quuxification");
    let before = files(dir.path());
    let store = Store::open_read_only(&path).unwrap();
    reads_everything_and_writes_nothing(&store, &session_id);
    assert_eq!(files(dir.path()), before, "no -wal or -shm while open");
    drop(store);
    assert_eq!(files(dir.path()), before);
}

#[test]
fn an_index_without_a_wal_is_read_as_the_file_and_no_wal_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codeoid.db");
    let session_id = exchange(&Store::open(&path).unwrap(), "quuxification");
    // What a killed writer leaves once its WAL is removed, or a writer that closed between
    // the reader's look and its open: an index with no WAL.
    std::fs::write(dir.path().join("codeoid.db-shm"), vec![0u8; 32 * 1024]).unwrap();
    let before = files(dir.path());
    let store = Store::open_read_only(&path).unwrap();
    reads_everything_and_writes_nothing(&store, &session_id);
    drop(store);
    assert_eq!(
        files(dir.path()),
        before,
        "no -wal created, the index untouched"
    );
}

#[test]
fn a_file_this_process_may_not_write_is_refused_by_a_writing_open_and_read_by_a_read_only_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codeoid.db");
    let session_id = exchange(&Store::open(&path).unwrap(), "quuxification");
    let before = files(dir.path());
    let Some(_guard) = Unwritable::new(&path) else {
        eprintln!("cannot make a file read-only in this environment; skipping");
        return;
    };
    let err = Store::open(&path).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Io, "{}", err.full_message());
    assert!(err.message().contains("may not write the file"), "{err}");
    assert_eq!(
        files(dir.path()),
        before,
        "the refused open left nothing beside it"
    );
    let store = Store::open_read_only(&path).unwrap();
    reads_everything_and_writes_nothing(&store, &session_id);
    drop(store);
    assert_eq!(files(dir.path()), before);
}

#[test]
fn a_store_read_as_immutable_says_to_reopen_once_a_writer_starts() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("ro");
    std::fs::create_dir(&folder).unwrap();
    let path = folder.join("codeoid.db");
    let session_id = exchange(&Store::open(&path).unwrap(), "quuxification");
    let guard = Unwritable::new(&folder);
    if guard.is_none() {
        eprintln!("cannot make a folder read-only in this environment; skipping");
        return;
    }
    let reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.turns(&session_id, ..).unwrap().len(), 4);
    drop(guard);

    let writer = Store::open(&path).unwrap();
    for i in 0..50 {
        let s = session(&writer, &workspace("/w"), &format!("more {i}"), i);
        writer
            .record_turn(&s.id, &Turn::user_text(format!("turn {i}")))
            .unwrap();
    }
    let ws = workspace("/w");
    for _ in 0..2 {
        let err = reader.sessions(ws.id()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io, "{}", err.full_message());
        assert!(err.message().contains("open it again"), "{err}");
    }
    drop(writer);
    let err = reader
        .timeline(ws.id(), &TimelineQuery::default())
        .unwrap_err();
    assert!(err.message().contains("open it again"), "{err}");
    let again = Store::open_read_only(&path).unwrap();
    assert_eq!(again.sessions(ws.id()).unwrap().len(), 51);
}

#[test]
fn paths_that_hold_no_readable_store_are_refused_and_left_as_they_were() {
    let dir = tempfile::tempdir().unwrap();

    let missing = dir.path().join("sub").join("none.db");
    let err = Store::open_read_only(&missing).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(err.message().contains("none.db"), "{err}");
    assert!(!dir.path().join("sub").exists(), "no folder created");

    let err = Store::open_read_only(dir.path()).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.message().contains("is a directory"), "{err}");

    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let err = Store::open_read_only(&empty).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(err.message().contains("empty"), "{err}");

    let foreign = dir.path().join("app.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE notes(body TEXT)")
        .unwrap();
    let err = Store::open_read_only(&foreign).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");

    let mut options = codeoid_core::store::StoreOptions::default();
    options.read_only = true;
    let err = Store::open_in_memory_with(options).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.message().contains("read_only"), "{err}");

    for (version, kind, needle) in [
        (
            SCHEMA_VERSION + 1,
            ErrorKind::SchemaTooNew,
            "upgrade codeoid",
        ),
        (SCHEMA_VERSION - 1, ErrorKind::Io, "needs write access"),
    ] {
        let path = dir.path().join(format!("v{version}.db"));
        drop(Store::open(&path).unwrap());
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", version).unwrap();
        drop(conn);
        let before = std::fs::read(&path).unwrap();
        let err = Store::open_read_only(&path).err().unwrap();
        assert_eq!(err.kind(), kind, "{}", err.full_message());
        assert!(err.message().contains(needle), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), before, "not migrated");
    }
}

#[test]
fn a_wal_index_only_a_writer_may_rebuild_is_waited_for_then_refused_clearly() {
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codeoid.db");
    let shm = dir.path().join("codeoid.db-shm");
    let db = path.to_str().unwrap();
    let mut child = spawn_child(
        &[
            ("CODEOID_IT_CHILD", "writer"),
            ("CODEOID_IT_DB", db),
            ("CODEOID_IT_SESSION", "paused"),
            ("CODEOID_IT_PREFIX", "p"),
            ("CODEOID_IT_TURNS", "30"),
            ("CODEOID_IT_PAUSE", "1"),
        ],
        &[],
    );
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while !lines.next().unwrap().unwrap().ends_with("PAUSED") {}
    // Its checkpoint (250 ms after the last commit) and index merges are done well within this.
    std::thread::sleep(Duration::from_secs(1));
    let options = |wait_ms| {
        let mut options = StoreOptions::default();
        options.read_only = true;
        options.busy_timeout = Duration::from_millis(wait_ms);
        options
    };
    // While this process may not write the index, its connections map it read-only, and keep
    // it so after: they share one mapping.
    let Some(guard) = Unwritable::new(&shm) else {
        eprintln!("cannot make a file read-only in this environment; skipping");
        child.kill().unwrap();
        child.wait().unwrap();
        return;
    };
    let reader = Store::open_with(&path, options(300)).unwrap();
    assert_eq!(reader.turns("paused", ..).unwrap().len(), 30);
    let patient = std::sync::Arc::new(Store::open_with(&path, options(30_000)).unwrap());
    assert_eq!(patient.turns("paused", ..).unwrap().len(), 30);
    drop(guard);
    // A live writer's index whose header's two copies differ, as while it updates them: only
    // a connection that may write the index can rebuild it.
    let file = std::fs::OpenOptions::new().write(true).open(&shm).unwrap();
    file.write_all_at(&[0xAB; 8], 16).unwrap();
    drop(file);
    let refused = |err: codeoid_core::Error, started: Instant| {
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "waited: {err}"
        );
        assert_eq!(err.kind(), ErrorKind::Busy, "{}", err.full_message());
        assert!(err.message().contains("codeoid.db-shm"), "{err}");
        assert!(err.message().contains("write access"), "{err}");
    };
    let started = Instant::now();
    refused(reader.turns("paused", ..).unwrap_err(), started);
    let started = Instant::now();
    refused(
        Store::open_with(&path, options(300)).err().unwrap(),
        started,
    );

    // Opens and reads wait until the writer rebuilds the index.
    let waiting = std::thread::spawn({
        let path = path.clone();
        move || Store::open_with(&path, options(30_000)).and_then(|r| r.turns("paused", ..))
    });
    let reading = std::thread::spawn({
        let patient = std::sync::Arc::clone(&patient);
        move || patient.turns("paused", ..)
    });
    std::thread::sleep(Duration::from_millis(200));
    writeln!(child.stdin.take().unwrap(), "go").unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(child.wait().unwrap().success(), "{rest:?}");
    // Both began before the rebuild; each reads the store as it was after it (the rebuild and
    // the writer's next commit are two steps, so either state).
    for read in [waiting.join().unwrap(), reading.join().unwrap()] {
        let turns = read.unwrap().len();
        assert!(turns == 30 || turns == 31, "{turns}");
    }
    assert_eq!(reader.turns("paused", ..).unwrap().len(), 31);
}
