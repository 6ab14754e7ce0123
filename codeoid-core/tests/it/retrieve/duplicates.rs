//! A subagent's answer and its parent's `Task` result holding it take one recall hit, not two;
//! the same text anywhere else (no lineage, another session) stays a hit of its own.

use codeoid_core::Memory;
use codeoid_core::canonical::{EpisodeKind, Turn};
use codeoid_core::retrieve::RecallQuery;
use codeoid_core::store::{Lineage, LineageKind, NewSession};
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
