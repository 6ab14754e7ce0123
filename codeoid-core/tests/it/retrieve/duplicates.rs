//! One text never takes two recall hits: a subagent's answer and its parent's `Task` result
//! holding it, or a command's raw output (`Memory::run`) and the harness's call whose compressed
//! output names it, are one hit; the same text anywhere else (no lineage, another session, a
//! raw output nothing names) stays a hit of its own.

use codeoid_core::Memory;
use codeoid_core::canonical::{EpisodeKind, Turn};
use codeoid_core::retrieve::RecallQuery;
use codeoid_core::store::{Lineage, LineageKind, NewSession, RawOutput};
use serde_json::json;

use super::{exchange, open_in, session};
use crate::store::{at, call, result};
use crate::tools::lexical_config;

/// What the subagent found; long enough to be compared (short answers never are).
const ANSWER: &str = "The zephyr tokenizer builds a lattice of candidate splits, scores every \
                      path through the lattice and keeps the cheapest; the cost table lives in \
                      src/lattice/costs.rs.";

/// A session with `lineage` that makes a tool call and then answers [`ANSWER`]; returns the
/// answer's episode id.
fn answering_session(
    memory: &Memory,
    name: &str,
    lineage: Option<Lineage>,
    seconds: i64,
) -> String {
    let id = memory
        .start_session(NewSession {
            name: Some(name.into()),
            lineage,
            ..NewSession::default()
        })
        .unwrap()
        .id;
    let turns = [
        at(
            Turn::user_text("survey the tokenizer"),
            &format!("{name}-u"),
            seconds,
        ),
        at(
            call(&format!("{name}-c"), "Grep", json!({"pattern": "lattice"})),
            &format!("{name}-a"),
            seconds + 1,
        ),
        at(
            result(&format!("{name}-c"), "src/lattice/costs.rs", false),
            &format!("{name}-r"),
            seconds + 2,
        ),
        at(
            Turn::assistant_text(ANSWER),
            &format!("{name}-f"),
            seconds + 3,
        ),
    ];
    let recorded = memory.record_turns(&id, &turns).unwrap();
    let finished = memory.finish_session(&id).unwrap();
    recorded
        .iter()
        .flat_map(|r| r.episode_ids.iter())
        .chain(&finished)
        .find(|e| memory.episode(e).unwrap().header.kind == EpisodeKind::AssistantTurn)
        .cloned()
        .expect("the answer is an episode")
}

fn hit_ids(memory: &Memory, query: &str, limit: usize) -> Vec<String> {
    memory
        .recall(None, &RecallQuery::new(query).limit(limit))
        .unwrap()
        .into_iter()
        .map(|h| h.header.id)
        .collect()
}

#[test]
fn a_subagent_answer_and_its_parents_task_result_are_one_hit() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), lexical_config());
    let parent = session(&memory, "main");
    let task = exchange(
        &memory,
        &parent,
        "t",
        0,
        "find out how the tokenizer works",
        "Task",
        json!({"description": "Survey the zephyr tokenizer", "prompt": "survey the tokenizer"}),
        ANSWER,
    );
    let answer = answering_session(
        &memory,
        "sub",
        Some(Lineage {
            parent_session_id: parent.clone(),
            parent_name: Some("main".into()),
            at_turn: None,
            kind: LineageKind::Subagent,
        }),
        10,
    );
    let other = exchange(
        &memory,
        &parent,
        "o",
        20,
        "where are the costs",
        "Read",
        json!({"file_path": "src/lattice/costs.rs"}),
        "pub const ZEPHYR_SPLIT_COST: u32 = 3; // lattice tokenizer",
    );

    let hits = hit_ids(&memory, "zephyr tokenizer lattice cheapest path", 2);
    assert_eq!(hits.len(), 2, "{hits:?}");
    let pair = hits
        .iter()
        .filter(|id| **id == task || **id == answer)
        .count();
    assert_eq!(
        pair, 1,
        "one of the two repeats, the other hit is new: {hits:?}"
    );
    assert!(
        hits.contains(&other),
        "the freed slot goes to the next hit: {hits:?}"
    );

    // The same text in a session that is not the Task's subagent is a hit of its own.
    let from_unrelated = answering_session(&memory, "elsewhere", None, 30);
    let hits = hit_ids(&memory, "zephyr tokenizer lattice cheapest path", 6);
    assert!(hits.contains(&from_unrelated), "{hits:?}");
    assert_eq!(
        hits.iter()
            .filter(|id| **id == task || **id == answer)
            .count(),
        1,
        "{hits:?}"
    );
}

/// The compressed output a harness records for a command `Memory::run` ran: what the runner
/// returned, ending with the marker that names the raw-output episode.
fn compressed(raw_id: &str) -> String {
    format!(
        "FAILED tests/test_parser.py::test_quoted - AssertionError: 'a\"b' != 'a\\\\\"b'\n\
         1 failed, 41 passed in 0.84s\n[codeoid: pytest kept 9% — get_episode(\"{raw_id}\") has \
         the raw output]\n"
    )
}

#[test]
fn a_commands_raw_output_gives_way_to_the_call_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), lexical_config());
    let s = session(&memory, "main");
    let passing: String = (0..41)
        .map(|i| format!("tests/test_parser.py::test_case_{i} PASSED\n"))
        .collect();
    let stdout = format!(
        "{passing}FAILED tests/test_parser.py::test_quoted - AssertionError\n1 failed, 41 passed in \
         0.84s\n"
    );
    let command = "python3 -m pytest -q tests 2>&1";
    let raw = memory
        .store()
        .record_raw_output(
            &s,
            &RawOutput::new(command, stdout.as_bytes(), b"", Some(1)),
        )
        .unwrap();
    let call = exchange(
        &memory,
        &s,
        "b",
        10,
        "run the parser tests",
        "Bash",
        json!({ "command": command }),
        &compressed(&raw),
    );
    let other = exchange(
        &memory,
        &s,
        "o",
        20,
        "read the parser test",
        "Read",
        json!({"file_path": "tests/test_parser.py"}),
        "def test_quoted():\n    assert parse('a\"b') == 'a\\\\\"b'\n",
    );
    for limit in [1, 2, 3] {
        let hits = hit_ids(&memory, "pytest test_quoted failure", limit);
        assert_eq!(
            hits[0], call,
            "the call, wherever the raw output ranked: {hits:?}"
        );
        assert!(!hits.contains(&raw), "{hits:?}");
        if limit > 1 {
            assert_eq!(
                hits[1], other,
                "the freed slot goes to the next hit: {hits:?}"
            );
        }
    }
    // The raw output is one get_episode away, and a query only it answers still finds it.
    assert!(
        memory
            .episode(&raw)
            .unwrap()
            .content
            .contains("test_case_40 PASSED")
    );
    assert_eq!(hit_ids(&memory, "test_case_40", 3), [raw]);
}

#[test]
fn an_output_shown_uncompressed_is_one_hit_with_its_call_too() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), lexical_config());
    let s = session(&memory, "main");
    let command = "python3 -m pytest -q tests 2>&1";
    // Under 1 KiB: `Memory::run` shows it as it is, with no marker, and stores it first.
    let stdout = "F.\nFAILED tests/test_parser.py::test_quoted - assert ['\"a', 'b\"'] == ['a,b']\n\
                  1 failed, 1 passed in 0.01s\n";
    let raw = memory
        .store()
        .record_raw_output(
            &s,
            &RawOutput::new(command, stdout.as_bytes(), b"", Some(1)),
        )
        .unwrap();
    let call = exchange(
        &memory,
        &s,
        "b",
        10,
        "run the parser tests",
        "Bash",
        json!({ "command": command }),
        &format!("{stdout}\n(exit 1)"),
    );
    let hits = hit_ids(&memory, "pytest test_quoted failure", 4);
    assert_eq!(hits[0], call, "{hits:?}");
    assert!(!hits.contains(&raw), "{hits:?}");
    // Another session's run of the same command is another event.
    let other = session(&memory, "other");
    let elsewhere = memory
        .store()
        .record_raw_output(
            &other,
            &RawOutput::new(command, stdout.as_bytes(), b"", Some(1)),
        )
        .unwrap();
    assert!(hit_ids(&memory, "pytest test_quoted failure", 4).contains(&elsewhere));
}
