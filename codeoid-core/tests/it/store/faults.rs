//! Faults and bad input: malformed turns, corrupt, foreign and newer files, read-only
//! directories, SIGKILL in the middle of a write loop, and several processes writing at once.
//!
//! Child processes are this very test binary re-executed on the ignored test
//! [`child_process`], which reads its role from `CODEOID_IT_CHILD`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use codeoid_core::ErrorKind;
use codeoid_core::canonical::Turn;
use codeoid_core::store::{NewSession, Store};
use serde_json::json;

use super::{Unwritable, at, call, result, session, temp_store, workspace};

const CHILD_TEST: &str = "store::faults::child_process";

/// Entry point of child processes; does nothing unless `CODEOID_IT_CHILD` names a role.
#[test]
#[ignore = "entry point of the child processes the faults tests spawn"]
fn child_process() {
    let Ok(role) = std::env::var("CODEOID_IT_CHILD") else {
        return;
    };
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    match role.as_str() {
        "writer" => {
            let store = Store::open(var("CODEOID_IT_DB")).unwrap();
            let ws = workspace("/it");
            let sid = var("CODEOID_IT_SESSION");
            store
                .create_session(
                    &ws,
                    NewSession {
                        id: Some(sid.clone()),
                        ..NewSession::default()
                    },
                )
                .unwrap();
            let prefix = var("CODEOID_IT_PREFIX");
            let limit: u64 = var("CODEOID_IT_TURNS").parse().unwrap_or(0);
            let tools = var("CODEOID_IT_STYLE") == "tools";
            let payload = "x".repeat(16 * 1024);
            let mut i = 0u64;
            while limit == 0 || i < limit {
                let turn = if !tools {
                    Turn::user_text(format!("{prefix} message {i}"))
                } else {
                    match i % 3 {
                        0 => Turn::user_text(format!("{prefix} step {i}")),
                        1 => call(
                            &format!("{prefix}c{i}"),
                            "Bash",
                            json!({"command": format!("run {i}")}),
                        ),
                        _ => result(&format!("{prefix}c{}", i - 1), &payload, false),
                    }
                };
                let id = format!("{prefix}t{i}");
                store.record_turn(&sid, &at(turn, &id, i as i64)).unwrap();
                // Printed only after record_turn returned: an acknowledgement.
                println!("ACK {id}");
                i += 1;
            }
            if var("CODEOID_IT_PAUSE") == "1" {
                // Idle with the store open until told to go on, then record one more turn.
                println!("PAUSED");
                std::io::stdin().read_line(&mut String::new()).unwrap();
                let id = format!("{prefix}t{i}");
                let turn = Turn::user_text(format!("{prefix} resumed"));
                store.record_turn(&sid, &at(turn, &id, i as i64)).unwrap();
                println!("ACK {id}");
            }
        }
        "default_path" => {
            println!(
                "PATH {}",
                codeoid_core::store::default_path().unwrap().display()
            );
        }
        other => panic!("unknown child role {other:?}"),
    }
}

pub(super) fn spawn_child(envs: &[(&str, &str)], remove: &[&str]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        CHILD_TEST,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    for k in remove {
        cmd.env_remove(k);
    }
    cmd.spawn().unwrap()
}

pub(super) fn writer(db: &Path, session: &str, prefix: &str, turns: u64, style: &str) -> Child {
    spawn_child(
        &[
            ("CODEOID_IT_CHILD", "writer"),
            ("CODEOID_IT_DB", db.to_str().unwrap()),
            ("CODEOID_IT_SESSION", session),
            ("CODEOID_IT_PREFIX", prefix),
            ("CODEOID_IT_TURNS", &turns.to_string()),
            ("CODEOID_IT_STYLE", style),
        ],
        &[],
    )
}

/// Waits for `child` and returns the acknowledged turn ids, asserting it succeeded.
fn acks_of(child: Child) -> Vec<String> {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "child failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| ack(l).map(str::to_owned))
        .collect()
}

/// The turn id acknowledged on `line`. The test harness prints `test … ... ` without a newline
/// before the child runs, so the first acknowledgement shares its line.
pub(super) fn ack(line: &str) -> Option<&str> {
    line.find("ACK ").map(|i| line[i + 4..].trim())
}

fn file_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn sigkill_mid_write_loses_no_acknowledged_turn() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("codeoid.db");
    let mut child = writer(&db, "killed", "k", 0, "tools");
    let stdout = child.stdout.take().unwrap();
    let mut acked = Vec::new();
    let mut lines = BufReader::new(stdout).lines();
    while acked.len() < 300 {
        let line = lines
            .next()
            .expect("child ended before 300 acknowledgements")
            .unwrap();
        if let Some(id) = ack(&line) {
            acked.push(id.to_owned());
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix: no destructor, no clean close.
    // Lines already in the pipe were acknowledged too.
    for line in lines.map_while(Result::ok) {
        if let Some(id) = ack(&line) {
            acked.push(id.to_owned());
        }
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "the child was killed, not finished");

    let store = Store::open(&db).unwrap();
    store.integrity_check().unwrap();
    let turns = store.turns("killed", ..).unwrap();
    assert!(
        turns.len() >= acked.len(),
        "{} stored < {} acked",
        turns.len(),
        acked.len()
    );
    for (i, id) in acked.iter().enumerate() {
        assert_eq!(turns[i].seq, i as u64);
        assert_eq!(
            turns[i].turn.id.as_deref(),
            Some(id.as_str()),
            "acked turn {i} lost"
        );
    }
    // Writing continues where the killed process stopped.
    let next = format!("kt{}", turns.len());
    store
        .record_turn("killed", &at(Turn::user_text("after the crash"), &next, 1))
        .unwrap();
}

#[test]
fn two_processes_writing_at_once_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    // The file does not exist yet: both processes race to create and migrate it.
    let db = dir.path().join("shared.db");
    let a = writer(&db, "proc-a", "a", 240, "tools");
    let b = writer(&db, "proc-b", "b", 240, "tools");
    // The parent reads while they write.
    let mut reads = 0;
    let started = std::time::Instant::now();
    let store = loop {
        match Store::open(&db) {
            Ok(store) => break store,
            Err(e) if started.elapsed().as_secs() < 10 => {
                assert_ne!(e.kind(), ErrorKind::Busy, "{e}");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(e) => panic!("cannot open while children write: {}", e.full_message()),
        }
    };
    let ws = workspace("/it");
    while reads < 50 {
        store.timeline(ws.id(), &Default::default()).unwrap();
        reads += 1;
    }
    let (acks_a, acks_b) = (acks_of(a), acks_of(b));
    assert_eq!((acks_a.len(), acks_b.len()), (240, 240));
    for sid in ["proc-a", "proc-b"] {
        assert_eq!(store.turns(sid, ..).unwrap().len(), 240);
        assert_eq!(
            store.session_episodes(sid).unwrap().len(),
            80,
            "{sid}: one per call"
        );
    }
    store.integrity_check().unwrap();
}

#[test]
fn two_processes_appending_to_one_session_keep_every_turn() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("one.db");
    // Created first so the two writers only contend on writes here.
    drop(Store::open(&db).unwrap());
    let a = writer(&db, "shared", "a", 200, "text");
    let b = writer(&db, "shared", "b", 200, "text");
    let mut acked = acks_of(a);
    acked.extend(acks_of(b));
    let store = Store::open(&db).unwrap();
    let turns = store.turns("shared", ..).unwrap();
    assert_eq!(turns.len(), 400);
    assert!(
        turns.iter().enumerate().all(|(i, t)| t.seq == i as u64),
        "dense sequence"
    );
    let mut stored: Vec<String> = turns.into_iter().filter_map(|t| t.turn.id).collect();
    stored.sort();
    acked.sort();
    assert_eq!(stored, acked);
}

#[test]
fn default_path_honours_codeoid_db() {
    let child = spawn_child(
        &[
            ("CODEOID_IT_CHILD", "default_path"),
            ("CODEOID_DB", "/data/custom.db"),
        ],
        &[],
    );
    let out = child.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("PATH /data/custom.db\n"));
    let home = tempfile::tempdir().unwrap();
    let child = spawn_child(
        &[
            ("CODEOID_IT_CHILD", "default_path"),
            ("HOME", home.path().to_str().unwrap()),
            ("CODEOID_DB", ""),
        ],
        &["XDG_DATA_HOME"],
    );
    let out = child.wait_with_output().unwrap();
    let expected = home.path().join(".local/share/codeoid/codeoid.db");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("PATH {}\n", expected.display())),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn malformed_turns_are_rejected_and_nothing_changes() {
    for (json, needle) in [
        ("{not json", "malformed canonical turn json"),
        (r#"{"role": "system", "parts": []}"#, "system"),
        (r#"{"role": "user", "parts": [{"type": "video"}]}"#, "video"),
        (r#"{"role": "user"}"#, "parts"),
        (r#"{"role": "user", "parts": [], "colour": 1}"#, "colour"),
        (
            r#"{"id": "", "role": "user", "parts": []}"#,
            "turn id is empty",
        ),
        (
            r#"{"role": "assistant", "parts": [{"type": "tool_call", "id": "", "name": "x", "input": {}}]}"#,
            "empty id",
        ),
        (
            r#"{"role": "user", "parts": [], "timestamp": "nope"}"#,
            "timestamp \"nope\" is not an rfc 3339 time",
        ),
        (
            r#"{"role": "user", "parts": [], "timestamp": "+10000-01-01T00:00:00Z"}"#,
            "outside the years 1 to 9999",
        ),
    ] {
        let err = Turn::from_json(json).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{json}");
        assert!(
            err.message().to_lowercase().contains(needle),
            "{json}: {err}"
        );
    }

    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    store
        .record_turn(&s.id, &at(Turn::user_text("kept"), "u0", 1))
        .unwrap();
    let mut empty_id = Turn::user_text("x");
    empty_id.id = Some("  ".into());
    let err = store.record_turn(&s.id, &empty_id).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    // A time Python and RFC 3339 cannot hold would break every later read of the session.
    let mut far = Turn::user_text("x");
    far.timestamp = Some(chrono::DateTime::<chrono::Utc>::MAX_UTC);
    let err = store.record_turn(&s.id, &far).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("turn timestamp"), "{err}");
    for new in [
        NewSession {
            created_at: Some(chrono::DateTime::<chrono::Utc>::MIN_UTC),
            ..NewSession::default()
        },
        NewSession {
            id: Some("a\0b".into()),
            ..NewSession::default()
        },
    ] {
        let err = store.create_session(&ws, new).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    }
    let mut bad_result = result("c", "x", false);
    bad_result.role = codeoid_core::canonical::Role::Assistant;
    let batch = [
        at(call("c", "Bash", json!({})), "a1", 2),
        at(result("c", "fine", false), "r1", 3),
        bad_result,
    ];
    let err = store.record_turns(&s.id, &batch).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(
        err.message()
            .starts_with("turn 2 of the batch: part 0 of an assistant turn"),
        "{err}"
    );
    assert_eq!(
        store.turns(&s.id, ..).unwrap().len(),
        1,
        "the valid turns were not stored either"
    );
    assert_eq!(store.session(&s.id).unwrap().turn_count, 1);
    let err = store
        .record_turn("no-such-session", &Turn::user_text("x"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.message().contains("no-such-session"));
}

#[test]
fn a_corrupt_file_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    let junk: Vec<u8> = (0..16_384u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&path, &junk).unwrap();
    let err = Store::open(&path).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Corrupt);
    assert!(err.message().contains(&path.display().to_string()), "{err}");
    assert_eq!(file_bytes(&path), junk);

    // A real SQLite header followed by garbage pages.
    let real = dir.path().join("damaged.db");
    {
        let store = Store::open(&real).unwrap();
        let s = session(&store, &workspace("/w"), "s", 0);
        store.record_turn(&s.id, &Turn::user_text("hello")).unwrap();
    }
    let mut bytes = file_bytes(&real);
    for b in bytes.iter_mut().skip(100) {
        *b = !*b;
    }
    std::fs::write(&real, &bytes).unwrap();
    let err = Store::open(&real).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{}", err.full_message());
    assert_eq!(file_bytes(&real), bytes);
}

#[test]
fn another_applications_database_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('mine');")
            .unwrap();
    }
    let before = file_bytes(&path);
    let err = Store::open(&path).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Corrupt);
    assert!(err.message().contains("another application"), "{err}");
    assert!(err.message().contains("app.db"), "{err}");
    assert_eq!(file_bytes(&path), before);
    assert!(
        !dir.path().join("app.db-wal").exists(),
        "not switched to WAL"
    );
}

#[test]
fn a_store_from_a_newer_codeoid_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codeoid.db");
    {
        let store = Store::open(&path).unwrap();
        let s = session(&store, &workspace("/w"), "s", 0);
        store
            .record_turn(&s.id, &at(Turn::user_text("precious"), "u", 1))
            .unwrap();
    }
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
    }
    let before = file_bytes(&path);
    let err = Store::open(&path).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::SchemaTooNew);
    assert!(err.message().contains("schema version 99"), "{err}");
    assert!(err.message().contains("upgrade codeoid"), "{err}");
    assert_eq!(file_bytes(&path), before);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let kept: String = conn
        .query_row("SELECT json FROM turns", [], |r| r.get(0))
        .unwrap();
    assert!(kept.contains("precious"));
}

#[test]
fn a_read_only_directory_is_an_io_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let existing = ro.join("existing.db");
    {
        let store = Store::open(&existing).unwrap();
        let s = session(&store, &workspace("/w"), "s", 0);
        store
            .record_turn(&s.id, &at(Turn::user_text("kept"), "u", 1))
            .unwrap();
    }
    let Some(guard) = Unwritable::new(&ro) else {
        eprintln!("cannot make a directory read-only in this environment; skipping");
        return;
    };
    let fresh = ro.join("new.db");
    let err = Store::open(&fresh).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::Io, "{}", err.full_message());
    assert!(
        err.message().contains(&fresh.display().to_string()),
        "{err}"
    );
    assert!(!fresh.exists());

    // An existing store there cannot take writes: whichever step fails says Io.
    match Store::open(&existing) {
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Io, "{}", e.full_message());
            assert!(e.message().contains("existing.db"), "{e}");
        }
        Ok(store) => {
            let e = store.record_turn("x", &Turn::user_text("y")).unwrap_err();
            assert!(
                matches!(e.kind(), ErrorKind::Io | ErrorKind::NotFound),
                "{}",
                e.full_message()
            );
        }
    }
    drop(guard);
    let store = Store::open(&existing).unwrap();
    let s = &store.sessions(workspace("/w").id()).unwrap()[0];
    assert_eq!(store.turns(&s.id, ..).unwrap()[0].turn.text(), "kept");
}

#[test]
fn a_file_where_the_store_folder_should_be_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes");
    std::fs::write(&file, "kept").unwrap();
    for path in [file.join("codeoid.db"), file.join("deeper/codeoid.db")] {
        let err = Store::open(&path).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Io, "{}", err.full_message());
        let named = format!("{} is a file, not a directory", file.display());
        assert!(err.message().contains(&named), "{err}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept");
}

#[test]
fn a_path_that_names_no_file_is_invalid_input() {
    for (path, needle) in [
        ("", "empty"),
        (":memory:", "open_in_memory"),
        ("a\0b.db", "NUL byte"),
    ] {
        let err = Store::open(path).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{path:?}: {err}");
        assert!(err.message().contains(needle), "{err}");
    }
}

#[test]
fn integrity_check_while_another_process_writes_reports_no_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("checked.db");
    drop(Store::open(&db).unwrap());
    let mut child = writer(&db, "busy", "w", 0, "tools");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut acks = 0;
    let store = Store::open(&db).unwrap();
    // SQLite's FTS5 checks its index against the shape it last read on this connection: each
    // check after the first saw segments the writer had since merged away ("corruption").
    let mut failures = Vec::new();
    for _ in 0..30 {
        // Wait for more commits, so that each check reads a store the writer has changed.
        while let Some(Ok(line)) = lines.next() {
            if ack(&line).is_some() {
                acks += 1;
                if acks % 6 == 0 {
                    break;
                }
            }
        }
        if let Err(e) = store.integrity_check() {
            failures.push(e.full_message());
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(acks >= 180, "the writer acknowledged only {acks} turns");
    assert_eq!(
        failures,
        Vec::<String>::new(),
        "{} of 30 checks failed",
        failures.len()
    );
    store.integrity_check().unwrap();
}
