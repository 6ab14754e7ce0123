//! `recall_file` on real files: relative and absolute forms find the same latest read; live
//! reads recorded through `Memory::record_turn` are hashed, so the answer says whether the file
//! changed, was deleted or was edited later in memory; bulk-recorded (imported) reads have no
//! hash and say "unknown", as do reads of files outside the workspace, which are never opened; a
//! file never read is a plain answer, not an error. Shell commands that show a file (`cat`,
//! `sed -n`, `nl`, `head`, Codex's argument vectors) are reads, Codex's `apply_patch` a write.

use std::path::Path;

use codeoid_core::Memory;
use codeoid_core::canonical::Turn;
use serde_json::json;

use super::lexical_memory;
use crate::retrieve::{exchange, session};
use crate::store::{at, call, result};

/// Records, turn by turn as a live harness does, a read of `file` whose result is its content.
fn live_read(memory: &Memory, session: &str, key: &str, seconds: i64, file: &Path) -> String {
    let content = std::fs::read_to_string(file).unwrap();
    memory
        .record_turn(
            session,
            &at(Turn::user_text("look at it"), &format!("{key}-u"), seconds),
        )
        .unwrap();
    let input = json!({"file_path": file.to_string_lossy()});
    memory
        .record_turn(
            session,
            &at(
                call(&format!("{key}-c"), "Read", input),
                &format!("{key}-a"),
                seconds + 1,
            ),
        )
        .unwrap();
    let out = memory
        .record_turn(
            session,
            &at(
                result(&format!("{key}-c"), &content, false),
                &format!("{key}-r"),
                seconds + 2,
            ),
        )
        .unwrap();
    out.recorded.episode_ids[0].clone()
}

fn recall_file(memory: &Memory, session: &str, path: &str) -> String {
    let out = memory.call_tool(
        Some(session),
        "recall_file",
        &json!({"path": path}).to_string(),
    );
    assert!(!out.is_error, "{}", out.text);
    out.text
}

#[test]
fn live_reads_are_hashed_and_compared_with_the_file_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let root = memory.workspace().root().to_path_buf();
    std::fs::create_dir_all(root.join("src")).unwrap();
    let file = root.join("src/lib.rs");
    std::fs::write(&file, "pub fn answer() -> u32 { 41 }\n").unwrap();
    let s = session(&memory, "live");
    let first = live_read(&memory, &s, "r1", 0, &file);
    std::fs::write(&file, "pub fn answer() -> u32 { 42 }\n").unwrap();
    let latest = live_read(&memory, &s, "r2", 100, &file);
    assert_ne!(first, latest);

    // Relative and absolute forms find the latest read, which matches the file.
    let absolute = file.to_string_lossy().into_owned();
    for path in ["src/lib.rs", "./src/lib.rs", absolute.as_str()] {
        let text = recall_file(&memory, &s, path);
        assert!(
            text.starts_with(&format!("### Read({absolute}) — current session\n")),
            "{text}"
        );
        assert!(
            text.contains(&format!("\n- episode_id: {latest}\n")),
            "{text}"
        );
        assert!(
            text.contains(&format!("\n- file: src/lib.rs (read as {absolute})\n")),
            "{text}"
        );
        assert!(
            text.contains("\n- on disk: unchanged since this read (same content hash)\n"),
            "{text}"
        );
        assert!(text.ends_with("pub fn answer() -> u32 { 42 }\n"), "{text}");
    }

    std::fs::write(&file, "pub fn answer() -> u32 { 43 }\n").unwrap();
    let text = recall_file(&memory, &s, "src/lib.rs");
    assert!(
        text.contains("\n- on disk: CHANGED since this read"),
        "{text}"
    );

    // An edit recorded after the read is named.
    let edit = exchange(
        &memory,
        &s,
        "e1",
        200,
        "bump it",
        "Edit",
        json!({"file_path": absolute, "old_string": "42", "new_string": "43"}),
        "The file has been updated.",
    );
    let text = recall_file(&memory, &s, "src/lib.rs");
    assert!(
        text.contains(&format!(
            "\n- changed later in memory: Edit at 2025-10-09T08:56:42Z — current session \
             (episode_id: {edit})\n"
        )),
        "{text}"
    );

    std::fs::remove_file(&file).unwrap();
    let text = recall_file(&memory, &s, "src/lib.rs");
    assert!(
        text.contains("\n- on disk: the file no longer exists\n"),
        "{text}"
    );
}

#[test]
fn imported_reads_have_no_hash_and_unknown_files_are_a_plain_answer() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let root = memory.workspace().root().to_path_buf();
    std::fs::write(root.join("notes.md"), "# notes\n").unwrap();
    let s = session(&memory, "imported");
    // `exchange` records in bulk, as importers do.
    exchange(
        &memory,
        &s,
        "i1",
        0,
        "read the notes",
        "Read",
        json!({"file_path": "notes.md"}),
        "# notes\n",
    );
    let current = session(&memory, "live");
    let text = recall_file(&memory, &current, "notes.md");
    assert!(
        text.starts_with("### Read(notes.md) — prior session #1\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "\n- on disk: unknown (no content hash was recorded for that read: imported \
             sessions have none, and a live read has none when the file was missing, too large \
             or outside the workspace root then)\n"
        ),
        "{text}"
    );
    let text = recall_file(&memory, &current, "never/read.rs");
    assert_eq!(
        text,
        "no earlier read of never/read.rs in this workspace's memory; read the file itself"
    );
    let absolute = root.join("gone.rs").to_string_lossy().into_owned();
    let text = recall_file(&memory, &current, &absolute);
    assert_eq!(
        text,
        format!(
            "no earlier read of {absolute} (workspace-relative gone.rs) in this workspace's \
             memory; read the file itself"
        )
    );
}

#[test]
fn hashing_live_reads_can_be_switched_off() {
    let dir = tempfile::tempdir().unwrap();
    let memory = crate::retrieve::open_in(
        dir.path(),
        codeoid_core::MemoryConfig {
            hash_live_reads: false,
            embedding: codeoid_core::retrieve::EmbeddingConfig {
                model: codeoid_core::retrieve::ModelChoice::Disabled,
                ..Default::default()
            },
            ..codeoid_core::MemoryConfig::default()
        },
    );
    let file = memory.workspace().root().join("a.txt");
    std::fs::write(&file, "a\n").unwrap();
    let s = session(&memory, "live");
    live_read(&memory, &s, "r", 0, &file);
    let text = recall_file(&memory, &s, "a.txt");
    assert!(
        text.contains("- on disk: unknown (no content hash"),
        "{text}"
    );
}

#[test]
fn only_files_under_the_workspace_are_opened_for_hashing() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(&dir.path().join("store"));
    let inside = memory.workspace().root().join("in.txt");
    std::fs::write(&inside, "in\n").unwrap();
    // A file the model named outside the workspace (a system file, another checkout).
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("out.txt");
    std::fs::write(&outside, "out\n").unwrap();
    let s = session(&memory, "live");
    live_read(&memory, &s, "i", 0, &inside);
    live_read(&memory, &s, "o", 10, &outside);
    let text = recall_file(&memory, &s, "in.txt");
    assert!(text.contains("- on disk: unchanged"), "{text}");
    let text = recall_file(&memory, &s, &outside.to_string_lossy());
    assert!(
        text.contains("- on disk: unknown (no content hash"),
        "{text}"
    );
}

#[test]
fn a_read_and_an_edit_of_one_file_in_one_turn_is_never_called_unchanged() {
    use codeoid_core::canonical::{Part, Role};
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let root = memory.workspace().root().to_path_buf();
    let file = root.join("config.toml");
    std::fs::write(&file, "level = 1\n").unwrap();
    let absolute = file.to_string_lossy().into_owned();
    let s = session(&memory, "live");
    memory
        .record_turn(&s, &at(Turn::user_text("raise the level"), "u", 0))
        .unwrap();
    // One assistant turn calls Read then Edit; the harness runs both before recording results.
    let mut both = call("c1", "Read", json!({"file_path": absolute}));
    both.parts.extend(
        call(
            "c2",
            "Edit",
            json!({"file_path": absolute, "old_string": "1", "new_string": "2"}),
        )
        .parts,
    );
    memory.record_turn(&s, &at(both, "a", 1)).unwrap();
    std::fs::write(&file, "level = 2\n").unwrap();
    let mut results = result("c1", "     1\tlevel = 1\n", false);
    results
        .parts
        .extend(result("c2", "The file has been updated.", false).parts);
    assert_eq!(results.role, Role::User);
    assert!(matches!(results.parts[1], Part::ToolResult(_)));
    let out = memory.record_turn(&s, &at(results, "r", 2)).unwrap();
    let (read, edit) = (&out.recorded.episode_ids[0], &out.recorded.episode_ids[1]);

    // The read's hash was taken after the edit ran, so it matches the file on disk; the
    // answer must not call the stale read current, and names the edit that followed it.
    let text = recall_file(&memory, &s, "config.toml");
    assert!(
        text.contains(&format!("\n- episode_id: {read}\n")),
        "{text}"
    );
    assert!(!text.contains("unchanged since this read"), "{text}");
    assert!(
        text.contains(
            "\n- on disk: unknown (the file matches the hash recorded with this read, but the \
             write below came after the read and may predate that hash; read the file again)\n"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("(episode_id: {edit})")), "{text}");
}

#[test]
fn a_read_of_part_of_a_file_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let s = session(&memory, "work");
    exchange(
        &memory,
        &s,
        "p1",
        0,
        "look at the parser",
        "Read",
        json!({"file_path": "src/parser.rs", "offset": 120, "limit": 50}),
        "   120→fn parse() {\n",
    );
    let current = session(&memory, "live");
    let text = recall_file(&memory, &current, "src/parser.rs");
    assert!(
        text.contains(
            "\n- part: this read was called with range arguments (offset: 120, limit: 50) and \
             may hold only part of the file\n- on disk: "
        ),
        "{text}"
    );
    // A later read of the whole file is the answer, without the line.
    exchange(
        &memory,
        &s,
        "p2",
        10,
        "now all of it",
        "Read",
        json!({"file_path": "src/parser.rs"}),
        "     1→use std::fmt;\n",
    );
    let text = recall_file(&memory, &current, "src/parser.rs");
    assert!(!text.contains("- part:"), "{text}");
    let found = memory.recall_file("src/parser.rs").unwrap().unwrap();
    assert_eq!(found.part, None);
}

#[test]
fn a_window_the_harness_recorded_is_exact_and_found_many_turns_after_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let s = session(&memory, "work");
    memory
        .record_turn(&s, &at(Turn::user_text("read them all"), "u", 1))
        .unwrap();
    // Eight parallel reads, their results recorded one message at a time (as OpenAI's formats
    // are): the last read's result comes eight turns after the call.
    let mut parallel = call("c0", "Read", json!({"file_path": "src/f0.rs"}));
    for i in 1..8 {
        let more = call(
            &format!("c{i}"),
            "Read",
            json!({"file_path": format!("src/f{i}.rs")}),
        );
        parallel.parts.extend(more.parts);
    }
    memory.record_turn(&s, &at(parallel, "a", 2)).unwrap();
    for i in 0..8 {
        let mut answered = result(&format!("c{i}"), &format!("     1→mod f{i};\n"), false);
        // What Claude Code's importer keeps of the harness's own record of the read.
        answered.meta.insert(
            "tool_use_results".into(),
            json!({ format!("c{i}"): {"file": {"startLine": 1, "numLines": 1, "totalLines": 1 + i}} }),
        );
        memory
            .record_turn(&s, &at(answered, &format!("r{i}"), 3 + i as i64))
            .unwrap();
    }
    let whole = memory.recall_file("src/f0.rs").unwrap().unwrap();
    assert_eq!(whole.part, None, "one line of a one-line file");
    let cut = memory.recall_file("src/f7.rs").unwrap().unwrap();
    assert_eq!(
        cut.part.map(|p| p.to_string()).as_deref(),
        Some("this read holds lines 1–1 of 8 only; read the file for the rest")
    );
}

/// Records, turn by turn as a live harness does, one call of `tool` with `input` whose result is
/// `output`.
fn live_call(
    memory: &Memory,
    session: &str,
    key: &str,
    seconds: i64,
    tool: &str,
    input: serde_json::Value,
    output: &str,
) {
    memory
        .record_turn(
            session,
            &at(
                call(&format!("{key}-c"), tool, input),
                &format!("{key}-a"),
                seconds,
            ),
        )
        .unwrap();
    memory
        .record_turn(
            session,
            &at(
                result(&format!("{key}-c"), output, false),
                &format!("{key}-r"),
                seconds + 1,
            ),
        )
        .unwrap();
}

#[test]
fn shell_commands_that_show_a_file_are_reads() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let root = memory.workspace().root().to_path_buf();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/b.py"), "B = 1\n").unwrap();
    let s = session(&memory, "work");
    memory
        .record_turn(&s, &at(Turn::user_text("look at b"), "u", 0))
        .unwrap();
    let reads = [
        ("Bash", json!({"command": "cat src/b.py"}), None),
        ("Bash", json!({"command": "nl -ba src/b.py"}), None),
        (
            "Bash",
            json!({"command": "sed -n '1,200p' src/b.py"}),
            Some("`sed -n '1,200p' src/b.py`"),
        ),
        (
            "Bash",
            json!({"command": "cd src && head -n 40 b.py"}),
            Some("`cd src && head -n 40 b.py`"),
        ),
        // Codex: an argument vector through its shell tool.
        (
            "shell",
            json!({"command": ["bash", "-lc", "cat src/b.py"]}),
            None,
        ),
    ];
    for (i, (tool, input, part)) in reads.into_iter().enumerate() {
        live_call(
            &memory,
            &s,
            &format!("k{i}"),
            10 * (i as i64 + 1),
            tool,
            input.clone(),
            "B = 1\n",
        );
        let text = recall_file(&memory, &s, "src/b.py");
        assert!(text.contains("\n- file: src/b.py\n"), "{input}: {text}");
        assert!(
            text.contains("\n- on disk: unchanged since this read (same content hash)\n"),
            "{input}: {text}"
        );
        match part {
            None => assert!(!text.contains("\n- part: "), "{input}: {text}"),
            // The whole reads before it hold the same content: one of them is shown, and the
            // partial read named.
            Some(command) => assert!(
                text.contains(
                    "\n- chosen: the newest whole read of this content; the latest read (Bash at "
                ) && text.contains(&format!("but this read was the shell command {command}"))
                    && !text.contains("\n- part: "),
                "{input}: {text}"
            ),
        }
    }
    let text = recall_file(&memory, &s, "src/b.py");
    assert!(
        text.starts_with("### shell(cat src/b.py) — current session\n"),
        "{text}"
    );
    let index = memory.workspace_index(Some(&s)).unwrap();
    assert!(index.contains("- src/b.py — 5 touches, last "), "{index}");

    // One command reading two files, one whole and one in part: each read says its own.
    std::fs::write(root.join("src/c.py"), "C = 1\n").unwrap();
    std::fs::write(root.join("src/d.py"), "D = 1\nD2 = 2\nD3 = 3\n").unwrap();
    let both = json!({"command": "cat src/c.py && head -n 2 src/d.py"});
    live_call(
        &memory,
        &s,
        "two",
        90,
        "Bash",
        both,
        "C = 1\nD = 1\nD2 = 2\n",
    );
    let whole = recall_file(&memory, &s, "src/c.py");
    assert!(!whole.contains("\n- part: "), "{whole}");
    let part = recall_file(&memory, &s, "src/d.py");
    assert!(
        part.contains(
            "\n- part: this read was the shell command `cat src/c.py && head -n 2 src/d.py`, \
             which may show only part of the file\n"
        ),
        "{part}"
    );

    // Codex's apply_patch writes: a read before it is no longer called unchanged.
    let patch = "*** Begin Patch\n*** Update File: src/b.py\n@@\n-B = 1\n+B = 2\n*** End Patch\n";
    live_call(
        &memory,
        &s,
        "p",
        100,
        "apply_patch",
        json!(patch),
        "Success. Updated src/b.py",
    );
    let text = recall_file(&memory, &s, "src/b.py");
    assert!(
        text.contains("\n- changed later in memory: apply_patch at "),
        "{text}"
    );
    // Gemini CLI's older read_file names the file `absolute_path`.
    let absolute = root.join("src/b.py").to_string_lossy().into_owned();
    live_call(
        &memory,
        &s,
        "g",
        200,
        "read_file",
        json!({"absolute_path": absolute}),
        "B = 1\n",
    );
    let text = recall_file(&memory, &s, "src/b.py");
    assert!(text.starts_with("### read_file("), "{text}");
}

#[test]
fn a_later_read_of_part_gives_way_to_an_earlier_whole_read_of_the_same_content() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let root = memory.workspace().root().to_path_buf();
    std::fs::create_dir_all(root.join("src")).unwrap();
    let file = root.join("src/a.py");
    let lines: String = (0..300).map(|i| format!("line {i}\n")).collect();
    std::fs::write(&file, &lines).unwrap();
    let s = session(&memory, "work");
    memory
        .record_turn(&s, &at(Turn::user_text("look"), "u", 0))
        .unwrap();
    live_call(
        &memory,
        &s,
        "w",
        10,
        "Read",
        json!({"file_path": "src/a.py"}),
        &lines,
    );
    let window = json!({"file_path": "src/a.py", "offset": 100, "limit": 5});
    let five = "line 100\nline 101\nline 102\nline 103\nline 104\n";
    live_call(&memory, &s, "p", 20, "Read", window.clone(), five);

    let found = memory.recall_file("src/a.py").unwrap().unwrap();
    assert!(found.episode.content.contains("line 299"), "the whole read");
    assert_eq!(found.part, None);
    let later = found
        .passed_over
        .as_ref()
        .expect("the partial read is named");
    assert_eq!(
        later.part.to_string(),
        "this read was called with range arguments (offset: 100, limit: 5) and may hold only \
         part of the file"
    );
    assert_eq!(found.disk, codeoid_core::tools::DiskState::Unchanged);
    let text = recall_file(&memory, &s, "src/a.py");
    assert!(!text.contains("\n- part: "), "{text}");
    assert!(
        text.contains(&format!(
            "\n- chosen: the newest whole read of this content; the latest read (Read at {} — \
             current session, episode_id: {}) has the same content hash, but this read was \
             called with range arguments (offset: 100, limit: 5) and may hold only part of the \
             file\n",
            codeoid_core::store::iso8601(crate::store::time(21)),
            later.header.id
        )),
        "{text}"
    );

    // Once the file changed, an earlier whole read is of other content: the latest is shown.
    std::fs::write(&file, format!("{lines}line 300\n")).unwrap();
    live_call(&memory, &s, "q", 30, "Read", window, five);
    let found = memory.recall_file("src/a.py").unwrap().unwrap();
    assert!(found.passed_over.is_none());
    assert!(matches!(
        found.part,
        Some(codeoid_core::tools::ReadPart::Arguments(_))
    ));
    assert!(!found.episode.content.contains("line 299"));

    // A write recorded after the whole read may be in its hash (the hash is taken once the
    // read's turn ran, so an edit in the same turn gives the old text the new hash): the whole
    // read no longer stands for the content, and the latest read is shown.
    let whole = std::fs::read_to_string(&file).unwrap();
    live_call(
        &memory,
        &s,
        "w2",
        40,
        "Read",
        json!({"file_path": "src/a.py"}),
        &whole,
    );
    let edit = json!({"file_path": "src/a.py", "old_string": "line 7\n", "new_string": "line 7\n"});
    live_call(
        &memory,
        &s,
        "e",
        45,
        "Edit",
        edit,
        "The file src/a.py has been updated.",
    );
    let window = json!({"file_path": "src/a.py", "offset": 1, "limit": 3});
    live_call(
        &memory,
        &s,
        "p2",
        50,
        "Read",
        window,
        "line 0\nline 1\nline 2\n",
    );
    let found = memory.recall_file("src/a.py").unwrap().unwrap();
    assert!(found.passed_over.is_none(), "{:?}", found.passed_over);
    assert!(
        matches!(
            found.part,
            Some(codeoid_core::tools::ReadPart::Arguments(_))
        ),
        "{:?}",
        found.part
    );
    let content = &found.episode.content;
    assert!(
        content.contains("line 2") && !content.contains("line 299"),
        "the latest read: {content}"
    );

    // A file rewritten through a shell redirection is written too: a heredoc `cat >` after a
    // whole read keeps that read from standing for the content.
    live_call(
        &memory,
        &s,
        "w3",
        60,
        "Read",
        json!({"file_path": "src/a.py"}),
        &whole,
    );
    let rewrite = format!("cat > src/a.py <<'EOF'\n{whole}EOF");
    live_call(
        &memory,
        &s,
        "h",
        65,
        "Bash",
        json!({"command": rewrite}),
        "",
    );
    let window = json!({"file_path": "src/a.py", "offset": 1, "limit": 2});
    live_call(&memory, &s, "p3", 70, "Read", window, "line 0\nline 1\n");
    let found = memory.recall_file("src/a.py").unwrap().unwrap();
    assert!(found.passed_over.is_none(), "{:?}", found.passed_over);
    let content = &found.episode.content;
    assert!(
        content.contains("line 1") && !content.contains("line 299"),
        "the latest read: {content}"
    );
}
