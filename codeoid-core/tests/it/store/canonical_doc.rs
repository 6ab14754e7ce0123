//! `docs/canonical-turns.md` cannot rot: every `json` block in it parses as a canonical turn,
//! survives a serde round trip, and together the examples cover every part type.

use std::collections::HashSet;
use std::path::Path;

use codeoid_core::canonical::{Part, Turn};

fn json_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```json") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), text) => {
                block.push_str(text);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(current.is_none(), "unterminated json block");
    blocks
}

#[test]
fn every_example_in_the_canonical_turns_doc_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/canonical-turns.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let blocks = json_blocks(&doc);
    assert!(blocks.len() >= 7, "{} examples", blocks.len());
    let mut kinds = HashSet::new();
    for block in &blocks {
        let turn = Turn::from_json(block).unwrap_or_else(|e| panic!("{e}\n{block}"));
        let again = Turn::from_json(&serde_json::to_string(&turn).unwrap()).unwrap();
        assert_eq!(again, turn);
        for part in &turn.parts {
            kinds.insert(match part {
                Part::Text { .. } => "text",
                Part::Image(_) => "image",
                Part::Thinking(_) => "thinking",
                Part::ToolCall(_) => "tool_call",
                Part::ToolResult(_) => "tool_result",
                Part::Error { .. } => "error",
            });
        }
    }
    assert_eq!(kinds.len(), 6, "examples cover every part type: {kinds:?}");
}
