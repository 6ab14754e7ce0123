//! The model's own memory-tool calls (`recall`, `recall_file`, `timeline`, `get_episode`, bare
//! or behind a harness's prefix) are recorded like any tool call, so the timeline and
//! `get_episode` keep the verbatim history, but they are never recall hits: a recorded recall
//! holds copies of the episodes it found, and recalling it would return those copies again,
//! nested one level deeper each time.

use codeoid_core::retrieve::RecallQuery;
use codeoid_core::store::TimelineQuery;
use serde_json::json;

use super::{exchange, model_config, open_in, session};

const QUERY: &str = "invoice total rounding";

#[test]
fn recorded_recalls_are_kept_but_never_recalled() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), model_config());
    let first = session(&memory, "one");
    let read = exchange(
        &memory,
        &first,
        "r",
        0,
        "how is the invoice total rounded?",
        "Read",
        json!({"file_path": "billing/invoice.py"}),
        "def total(items):\n    return round(sum(i.price for i in items), 2)  # banker's rounding\n",
    );
    let grep = exchange(
        &memory,
        &first,
        "g",
        10,
        "how is the invoice total rounded?",
        "Grep",
        json!({"pattern": "round(", "path": "billing"}),
        "billing/invoice.py:2: return round(sum(...), 2)\nbilling/tax.py:9: return round(x * rate, 2)",
    );
    memory.finish_session(&first).unwrap();
    // Three later sessions ask memory the same thing, under three spellings of the tool.
    let mut recalls = Vec::new();
    for (k, name) in ["recall", "codeoid_memory__recall", "mcp__codeoid__recall"]
        .iter()
        .enumerate()
    {
        let later = session(&memory, &format!("later {k}"));
        memory.flush().unwrap();
        let arguments = json!({ "query": QUERY });
        let out = memory.call_tool(Some(&later), name, &arguments.to_string());
        assert!(!out.is_error, "{}", out.text);
        recalls.push(exchange(
            &memory,
            &later,
            &format!("q{k}"),
            100 + 10 * k as i64,
            "remind me how invoice totals are rounded",
            name,
            arguments,
            &out.text,
        ));
        memory.finish_session(&later).unwrap();
    }
    memory.flush().unwrap();

    let last = session(&memory, "final");
    let hits = memory
        .recall(Some(&last), &RecallQuery::new(QUERY).limit(20))
        .unwrap();
    let ids: Vec<&str> = hits.iter().map(|h| h.header.id.as_str()).collect();
    assert!(
        ids.contains(&read.as_str()) && ids.contains(&grep.as_str()),
        "{ids:?}"
    );
    for recall in &recalls {
        assert!(
            !ids.contains(&recall.as_str()),
            "a recorded recall came back: {ids:?}"
        );
    }
    // Asked for by tool name, they are still not hits.
    let mut by_tool = RecallQuery::new(QUERY);
    by_tool.filters.tool_name = Some("recall".into());
    assert!(memory.recall(Some(&last), &by_tool).unwrap().is_empty());
    // The tool's answer holds each episode once: no nested copies.
    let text = memory
        .call_tool(
            Some(&last),
            "recall",
            &json!({ "query": QUERY }).to_string(),
        )
        .text;
    assert_eq!(text.matches("### [1]").count(), 1, "{text}");
    assert_eq!(text.matches("banker's rounding").count(), 1, "{text}");

    // Verbatim history keeps them.
    let page = memory.timeline(&TimelineQuery::default()).unwrap();
    for recall in &recalls {
        assert!(page.episodes.iter().any(|e| &e.id == recall), "timeline");
        let stored = memory.episode(recall).unwrap();
        assert!(stored.content.contains("banker's rounding"), "get_episode");
    }
}
