//! Lexical search: identifier-aware matching, filters applied before the top-k cut, and a
//! sanitizer that survives any input against the real FTS5 table.

use codeoid_core::ErrorKind;
use codeoid_core::canonical::Turn;
use codeoid_core::store::{LexicalFilters, RawOutput, Store, match_expression};
use proptest::prelude::*;
use serde_json::json;

use super::{at, call, result, session, temp_store, time, workspace};

/// Stores one tool call per `(call id, tool, input, output)`, at seconds 1.. in order.
fn calls(store: &Store, session_id: &str, items: &[(&str, &str, serde_json::Value, &str)]) {
    let mut turns = vec![at(Turn::user_text("work"), &format!("{session_id}-u"), 0)];
    for (i, (id, tool, input, output)) in items.iter().enumerate() {
        let t = 1 + i as i64;
        turns.push(at(call(id, tool, input.clone()), &format!("{id}-a"), t));
        turns.push(at(result(id, output, false), &format!("{id}-r"), t));
    }
    store.record_turns(session_id, &turns).unwrap();
}

fn hit_calls(store: &Store, ws: &str, query: &str, filters: &LexicalFilters) -> Vec<String> {
    store
        .lexical_search(ws, query, filters, 10)
        .unwrap()
        .into_iter()
        .filter_map(|h| h.header.call_id)
        .collect()
}

#[test]
fn identifiers_find_what_a_developer_means() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let s = session(&store, &ws, "s", 0);
    calls(
        &store,
        &s.id,
        &[
            (
                "snake",
                "Grep",
                json!({"pattern": "fn record_turn"}),
                "src/store/record.rs:70: pub fn record_turn(&self)",
            ),
            (
                "camel",
                "Read",
                json!({"file_path": "/repo/src/api.ts"}),
                "export class RecordTurnRequest {}",
            ),
            (
                "path",
                "Read",
                json!({"file_path": "/repo/codeoid-core/src/store/mod.rs"}),
                "//! The verbatim episode store",
            ),
            (
                "other",
                "Read",
                json!({"file_path": "/repo/README.md"}),
                "unrelated words about turning records",
            ),
        ],
    );
    let none = LexicalFilters::default();
    for query in ["record_turn", "RecordTurn", "recordTurn"] {
        let hits = hit_calls(&store, ws.id(), query, &none);
        assert_eq!(hits.len(), 2, "{query}: {hits:?}");
        assert!(
            hits.contains(&"snake".to_owned()) && hits.contains(&"camel".to_owned()),
            "{query}"
        );
    }
    assert_eq!(hit_calls(&store, ws.id(), "store/mod.rs", &none), ["path"]);
    assert_eq!(hit_calls(&store, ws.id(), "mod.rs", &none), ["path"]);
    let hits = store
        .lexical_search(ws.id(), "verbatim episode", &none, 10)
        .unwrap();
    assert_eq!(hits[0].header.call_id.as_deref(), Some("path"));
    assert!(hits[0].bm25 > 0.0, "higher is better");
    assert!(
        store
            .lexical_search(workspace("/else").id(), "record_turn", &none, 10)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_written_file_is_searched_by_its_words_and_a_read_by_its_text_not_its_gutter() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let s = session(&store, &ws, "s", 0);
    calls(
        &store,
        &s.id,
        &[
            (
                // In the input's JSON every line break is `\n`: `\nexport` must still be `export`.
                "write",
                "Write",
                json!({"file_path": "/repo/app.ts", "content": "import x\nexport default\tApp;"}),
                "File created successfully",
            ),
            (
                "read",
                "Read",
                json!({"file_path": "/repo/lib.rs"}),
                "     1→fn main() {\n    42→    run();\n    43→}",
            ),
        ],
    );
    let none = LexicalFilters::default();
    assert_eq!(hit_calls(&store, ws.id(), "export", &none), ["write"]);
    assert_eq!(hit_calls(&store, ws.id(), "default App", &none), ["write"]);
    assert_eq!(hit_calls(&store, ws.id(), "fn main run", &none), ["read"]);
    // A line number is the file's layout, not its text: the gutter is not indexed.
    assert!(hit_calls(&store, ws.id(), "42", &none).is_empty());
    // The episode keeps its exact bytes; only the index reads them as text.
    let write = store
        .lexical_search(ws.id(), "export", &none, 1)
        .unwrap()
        .remove(0);
    let stored = store.episode(ws.id(), &write.header.id).unwrap();
    assert!(stored.content.contains(r"import x\nexport default\tApp;"));
}

#[test]
fn a_long_prompt_is_indexed_whole_on_its_first_call_and_by_its_head_on_the_others() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let s = session(&store, &ws, "s", 0);
    // A pasted log: a head naming the task, 1,000+ characters of filler, a rare word at the end.
    let filler = "the build log line goes on and on ".repeat(40);
    let prompt = format!("deploy the frobnicator service\n{filler}\nzanzibarquux at the end");
    let turns = [
        at(Turn::user_text(prompt.clone()), "u", 0),
        at(call("first", "Bash", json!({"command": "make"})), "a1", 1),
        at(result("first", "built", false), "r1", 1),
        at(
            call("second", "Bash", json!({"command": "make deploy"})),
            "a2",
            2,
        ),
        at(result("second", "deployed", false), "r2", 2),
    ];
    store.record_turns(&s.id, &turns).unwrap();
    let none = LexicalFilters::default();
    let mut head = hit_calls(&store, ws.id(), "frobnicator", &none);
    head.sort();
    assert_eq!(
        head,
        ["first", "second"],
        "the head of the prompt finds every call"
    );
    assert_eq!(hit_calls(&store, ws.id(), "zanzibarquux", &none), ["first"]);
    // Only the index is cut: the second call's episode keeps the whole prompt.
    let second = store
        .lexical_search(ws.id(), "deployed", &none, 1)
        .unwrap()
        .remove(0);
    let stored = store.episode(ws.id(), &second.header.id).unwrap();
    assert!(
        stored
            .content
            .starts_with(&format!("# User intent\n{prompt}\n\n# Tool: Bash"))
    );
}

#[test]
fn filters_apply_before_the_cut() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let busy = session(&store, &ws, "busy", 0);
    let quiet = session(&store, &ws, "quiet", 1);
    // 60 strong matches in one session, a single weak one elsewhere.
    let items: Vec<(String, serde_json::Value, String)> = (0..60)
        .map(|i| {
            (
                format!("b{i}"),
                json!({"command": format!("flaky flaky test {i}")}),
                "flaky flaky".to_owned(),
            )
        })
        .collect();
    let refs: Vec<(&str, &str, serde_json::Value, &str)> = items
        .iter()
        .map(|(id, input, out)| (id.as_str(), "Bash", input.clone(), out.as_str()))
        .collect();
    calls(&store, &busy.id, &refs);
    calls(
        &store,
        &quiet.id,
        &[(
            "q",
            "Read",
            json!({"file_path": "/repo/tests/flaky.rs", "note": "a long input that dilutes the single mention of the word"}),
            "ok",
        )],
    );

    let top = store
        .lexical_search(ws.id(), "flaky", &LexicalFilters::default(), 5)
        .unwrap();
    assert!(top.iter().all(|h| h.header.session_id == busy.id));
    let by_session = LexicalFilters {
        session_id: Some(quiet.id.clone()),
        ..Default::default()
    };
    assert_eq!(hit_calls(&store, ws.id(), "flaky", &by_session), ["q"]);
    let excluding = LexicalFilters {
        exclude_session_id: Some(busy.id.clone()),
        ..Default::default()
    };
    assert_eq!(hit_calls(&store, ws.id(), "flaky", &excluding), ["q"]);
    // A live context from the start of the session is the whole session.
    let live = LexicalFilters {
        exclude_live: Some((busy.id.clone(), i64::MIN)),
        ..Default::default()
    };
    assert_eq!(hit_calls(&store, ws.id(), "flaky", &live), ["q"]);
    // Exclusions hold beside filters that join the episode rows too.
    let excluded_by_tool = LexicalFilters {
        tool_name: Some("bash".into()),
        exclude_session_id: Some(busy.id.clone()),
        ..Default::default()
    };
    assert!(hit_calls(&store, ws.id(), "flaky", &excluded_by_tool).is_empty());
    let live_by_tool = LexicalFilters {
        tool_name: Some("bash".into()),
        exclude_live: Some((busy.id.clone(), i64::MIN)),
        ..Default::default()
    };
    assert!(hit_calls(&store, ws.id(), "flaky", &live_by_tool).is_empty());
    let by_tool = LexicalFilters {
        tool_name: Some("read".into()),
        ..Default::default()
    };
    assert_eq!(hit_calls(&store, ws.id(), "flaky", &by_tool), ["q"]);
    let by_path = LexicalFilters {
        paths: vec!["tests/flaky.rs".into()],
        ..Default::default()
    };
    assert_eq!(hit_calls(&store, ws.id(), "flaky", &by_path), ["q"]);
    // The quiet call completed at second 1 of its session; busy ones at 1..=60.
    let window = LexicalFilters {
        since: Some(time(30)),
        until: Some(time(32)),
        ..Default::default()
    };
    let ids = hit_calls(&store, ws.id(), "flaky", &window);
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(sorted, ["b29", "b30"]);

    let err = store
        .lexical_search(ws.id(), "x", &LexicalFilters::default(), 0)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn raw_outputs_are_searchable() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let s = session(&store, &ws, "s", 0);
    let id = store
        .record_raw_output(
            &s.id,
            &RawOutput::new("pytest", b"FAILED test_parse_header\n", b"", Some(1)),
        )
        .unwrap();
    let hits = store
        .lexical_search(ws.id(), "test_parse_header", &LexicalFilters::default(), 3)
        .unwrap();
    assert_eq!(hits[0].header.id, id);
}

/// Text made of FTS5 syntax, identifiers, emoji and noise.
fn hostile_text() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        Just("\"".to_owned()),
        Just("(".to_owned()),
        Just(")".to_owned()),
        Just("NEAR(".to_owned()),
        Just("NEAR/3".to_owned()),
        Just("*".to_owned()),
        Just("^".to_owned()),
        Just("-".to_owned()),
        Just(" AND ".to_owned()),
        Just(" OR ".to_owned()),
        Just(" NOT ".to_owned()),
        Just("summary:".to_owned()),
        Just("{content tool_name}:".to_owned()),
        Just("🎉".to_owned()),
        Just("e\u{301}".to_owned()),
        Just("\0".to_owned()),
        "[a-zA-Z_./]{1,12}",
        any::<String>(),
    ];
    prop::collection::vec(atom, 0..24).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn any_text_is_a_valid_query(query in hostile_text()) {
        let (ws, store) = SHARED.with(|s| (s.0.clone(), s.1.clone()));
        let hits = store.lexical_search(&ws, &query, &LexicalFilters::default(), 5);
        prop_assert!(hits.is_ok(), "{:?} -> {:?} ({:?})", query, hits.err(), match_expression(&query));
    }
}

thread_local! {
    /// One real store per test thread, with content to match against.
    static SHARED: (String, std::rc::Rc<Store>) = {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("codeoid.db")).unwrap();
        // Keep the directory for the life of the thread.
        std::mem::forget(dir);
        let ws = workspace("/fuzz");
        let s = session(&store, &ws, "s", 0);
        calls(&store, &s.id, &[("c", "Bash", json!({"command": "echo near and or not"}), "e\u{301}t\u{e9} 🎉 summary content")]);
        (ws.id().to_owned(), std::rc::Rc::new(store))
    };
}

#[test]
fn a_hundred_kilobytes_of_query_is_fine() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let s = session(&store, &ws, "s", 0);
    calls(
        &store,
        &s.id,
        &[(
            "c",
            "Bash",
            json!({"command": "make"}),
            "needle in a haystack",
        )],
    );
    let mut query: String = "(\"unbalanced AND NEAR( x* ^y -z 🎉 ".repeat(3000);
    query.push_str(" needle");
    assert!(query.len() > 100_000);
    let hits = store
        .lexical_search(ws.id(), &query, &LexicalFilters::default(), 5)
        .unwrap();
    // Repeated terms collapse, so the needle at the very end is still among the kept terms.
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].header.call_id.as_deref(), Some("c"));
}

#[test]
fn words_in_most_episodes_do_not_hide_the_rare_ones() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let s = session(&store, &ws, "s", 0);
    // Enough episodes for common-word skipping to apply: "common" is in all of them.
    let items: Vec<(String, serde_json::Value, String)> = (0..1100)
        .map(|i| {
            let out = match i {
                7 => "common words and a zebra",
                8 => "common words and some rust",
                _ => "common words only",
            };
            (
                format!("c{i}"),
                json!({"command": format!("step {i}")}),
                out.to_owned(),
            )
        })
        .collect();
    let refs: Vec<(&str, &str, serde_json::Value, &str)> = items
        .iter()
        .map(|(id, input, out)| (id.as_str(), "Bash", input.clone(), out.as_str()))
        .collect();
    calls(&store, &s.id, &refs);
    let none = LexicalFilters::default();
    // Only the rare word decides; episodes with just the common one are not candidates.
    assert_eq!(hit_calls(&store, ws.id(), "common zebra", &none), ["c7"]);
    let both = hit_calls(&store, ws.id(), "zebra rust common", &none);
    assert_eq!(both.len(), 2, "{both:?}");
    // Alone, or with words that match nothing, a common word is still searched.
    assert_eq!(
        store
            .lexical_search(ws.id(), "common", &none, 20)
            .unwrap()
            .len(),
        20
    );
    assert_eq!(
        store
            .lexical_search(ws.id(), "common unicorn", &none, 20)
            .unwrap()
            .len(),
        20
    );
    // A phrase (an identifier) that matches nothing does not count as a rare word either.
    assert_eq!(
        store
            .lexical_search(ws.id(), "common record_turn", &none, 20)
            .unwrap()
            .len(),
        20
    );
}

#[test]
fn a_word_left_out_for_its_store_wide_count_is_searched_when_the_scope_has_nothing_else() {
    let (_dir, store) = temp_store();
    let a = workspace("/repo-a");
    let b = workspace("/repo-b");
    let old = session(&store, &a, "old", 0);
    let current = session(&store, &a, "current", 1);
    let elsewhere = session(&store, &b, "elsewhere", 2);
    // "spotter" is in nearly every episode of the store, so a query with a rarer word drops it.
    many_matches(&store, &old.id, "o", 1_000, "spotter transcripts");
    // The rarer word is only in the caller's own session and in another workspace.
    many_matches(&store, &current.id, "c", 3, "migration plan");
    many_matches(&store, &elsewhere.id, "e", 3, "migration plan");
    let excluded = LexicalFilters {
        exclude_session_id: Some(current.id.clone()),
        ..LexicalFilters::default()
    };
    for budget in [6_000, 100] {
        let hits = store
            .lexical_search_within(a.id(), "spotter migration", &excluded, 5, budget)
            .unwrap();
        assert_eq!(hits.len(), 5, "budget {budget}: {hits:?}");
        assert!(hits.iter().all(|h| h.header.session_id == old.id));
        assert!(hits.iter().all(|h| h.bm25 > 0.0));
    }
    // With a match of the rarer word in scope, it alone decides, as before.
    let hits = hit_calls(
        &store,
        a.id(),
        "spotter migration",
        &LexicalFilters::default(),
    );
    assert_eq!(hits, ["c2", "c1", "c0"]);
}

/// 400 Bash calls: `alpha` in 150 of them (said three times in the 50 oldest, once after),
/// `zebra` in three, `naïve` in one; ids `c0` (oldest) to `c399`.
fn budget_corpus(store: &Store, session_id: &str) {
    let items: Vec<(String, serde_json::Value, String)> = (0..400)
        .map(|i| {
            let out = match i {
                _ if i % 100 == 7 => "zebra crossing".to_owned(),
                250 => "a naïve approach".to_owned(),
                _ if i < 50 => "alpha alpha alpha".to_owned(),
                _ if i >= 300 => "alpha".to_owned(),
                _ => format!("filler {i}"),
            };
            (
                format!("c{i}"),
                json!({"command": format!("step {i}")}),
                out,
            )
        })
        .collect();
    let refs: Vec<(&str, &str, serde_json::Value, &str)> = items
        .iter()
        .map(|(id, input, out)| (id.as_str(), "Bash", input.clone(), out.as_str()))
        .collect();
    calls(store, session_id, &refs);
}

fn calls_within(
    store: &Store,
    ws: &str,
    query: &str,
    filters: &LexicalFilters,
    budget: usize,
) -> Vec<String> {
    store
        .lexical_search_within(ws, query, filters, 20, budget)
        .unwrap()
        .into_iter()
        .filter_map(|h| h.header.call_id)
        .collect()
}

#[test]
fn a_budget_keeps_the_rarest_terms_and_bounds_common_ones_to_their_newest_matches() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let s = session(&store, &ws, "s", 0);
    budget_corpus(&store, &s.id);
    let none = LexicalFilters::default();

    // Within the budget (the default covers the whole store) the query is searched as asked:
    // `alpha` episodes fill the list after the three zebras.
    let asked = calls_within(&store, ws.id(), "alpha zebra", &none, 6_000);
    assert_eq!(asked.len(), 20, "{asked:?}");
    assert_eq!(
        &asked[..3],
        ["c307", "c207", "c107"].as_slice(),
        "{asked:?}"
    );
    // Over budget, the rarest word is kept and the common one (150 episodes > 100) left out.
    assert_eq!(
        calls_within(&store, ws.id(), "alpha zebra", &none, 100),
        ["c307", "c207", "c107", "c7"]
    );
    // A word outside ASCII is searched whatever the budget (FTS5 folds its diacritics).
    assert_eq!(calls_within(&store, ws.id(), "naive", &none, 100), ["c250"]);
    assert_eq!(
        calls_within(&store, ws.id(), "naïve zebra", &none, 100)[0],
        "c250"
    );

    // Alone and over budget, a word is scored over its newest matches only: the oldest
    // episodes, which say it three times, rank first when every match is scored; with a budget
    // of 100 only c49 of them is among the 100 newest matches (c300..c399 less c307, and c49).
    let number = |id: &String| id[1..].parse::<u32>().unwrap();
    let all = calls_within(&store, ws.id(), "alpha", &none, 6_000);
    assert!(all.iter().all(|id| number(id) < 50), "{all:?}");
    let newest = calls_within(&store, ws.id(), "alpha", &none, 100);
    assert_eq!(newest.len(), 20);
    assert_eq!(newest[0], "c49", "{newest:?}");
    assert!(newest[1..].iter().all(|id| number(id) >= 300), "{newest:?}");

    // Filters still apply before the cut.
    let other = session(&store, &ws, "t", 10);
    calls(
        &store,
        &other.id,
        &[("t1", "Bash", json!({"command": "x"}), "alpha")],
    );
    let only_t = LexicalFilters {
        session_id: Some(other.id.clone()),
        ..LexicalFilters::default()
    };
    assert_eq!(calls_within(&store, ws.id(), "alpha", &only_t, 100), ["t1"]);

    let err = store
        .lexical_search_within(ws.id(), "alpha", &none, 10, 99)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("lexical budget 99"), "{err}");
}

#[test]
fn rotation_events_are_never_hits_nor_take_a_slot() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    // The rotation episodes' text names the session, so they match both words of the query
    // where each call matches one: without the rule they would be the top hits.
    let s = session(&store, &ws, "zebra migration", 0);
    calls(
        &store,
        &s.id,
        &[
            (
                "z1",
                "Bash",
                json!({"command": "check one"}),
                "a zebra and much else besides",
            ),
            (
                "z2",
                "Bash",
                json!({"command": "check two"}),
                "one migration and more besides",
            ),
        ],
    );
    for _ in 0..3 {
        store
            .rotate_session(&s.id, None, Some(time(100)), None)
            .unwrap();
    }
    let none = LexicalFilters::default();
    let hits = store
        .lexical_search(ws.id(), "zebra migration", &none, 2)
        .unwrap();
    let kinds: Vec<_> = hits
        .iter()
        .map(|h| (h.header.call_id.clone(), h.header.kind))
        .collect();
    assert_eq!(hits.len(), 2, "{kinds:?}");
    assert!(hits.iter().all(|h| h.header.call_id.is_some()), "{kinds:?}");
}

/// `n` calls whose outputs all say `word`, in `session_id`.
fn many_matches(store: &Store, session_id: &str, prefix: &str, n: usize, word: &str) {
    let ids: Vec<String> = (0..n).map(|i| format!("{prefix}{i}")).collect();
    let items: Vec<(&str, &str, serde_json::Value, &str)> = ids
        .iter()
        .map(|id| (id.as_str(), "Bash", json!({"command": "x"}), word))
        .collect();
    calls(store, session_id, &items);
}

#[test]
fn over_budget_the_newest_matches_are_taken_from_this_workspace_only() {
    let (_dir, store) = temp_store();
    let a = workspace("/repo-a");
    let b = workspace("/repo-b");
    let sa = session(&store, &a, "a", 0);
    let sb = session(&store, &b, "b", 0);
    calls(
        &store,
        &sa.id,
        &[("old", "Bash", json!({"command": "make"}), "zebra failure")],
    );
    // 150 newer matches elsewhere: more than the minimum budget of 100.
    many_matches(&store, &sb.id, "b", 150, "zebra");
    let none = LexicalFilters::default();
    let exact = store
        .lexical_search_within(a.id(), "zebra", &none, 5, 10_000)
        .unwrap();
    assert_eq!(exact.len(), 1);
    let budgeted = store
        .lexical_search_within(a.id(), "zebra", &none, 5, 100)
        .unwrap();
    assert_eq!(
        budgeted.len(),
        1,
        "workspace A's only match was crowded out"
    );
    assert_eq!(budgeted[0].header.call_id.as_deref(), Some("old"));
}

#[test]
fn over_budget_the_newest_matches_skip_the_excluded_session_and_live_context() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let prior = session(&store, &ws, "prior", 0);
    let current = session(&store, &ws, "current", 1);
    calls(
        &store,
        &prior.id,
        &[("old", "Bash", json!({"command": "make"}), "zebra failure")],
    );
    many_matches(&store, &current.id, "c", 150, "zebra");
    let excluded = LexicalFilters {
        exclude_session_id: Some(current.id.clone()),
        ..LexicalFilters::default()
    };
    let hits = hit_calls(&store, ws.id(), "zebra", &excluded);
    assert_eq!(hits.len(), 1, "exact plan: {hits:?}");
    let budgeted = store
        .lexical_search_within(ws.id(), "zebra", &excluded, 5, 100)
        .unwrap();
    assert_eq!(
        budgeted.len(),
        1,
        "the prior session's match was crowded out"
    );
    assert_eq!(budgeted[0].header.call_id.as_deref(), Some("old"));
    // The live context (here the whole current session) the same way.
    let live = LexicalFilters {
        exclude_live: Some((current.id.clone(), i64::MIN)),
        ..LexicalFilters::default()
    };
    let budgeted = store
        .lexical_search_within(ws.id(), "zebra", &live, 5, 100)
        .unwrap();
    assert_eq!(budgeted.len(), 1, "the live context crowded the rest out");
    assert_eq!(budgeted[0].header.call_id.as_deref(), Some("old"));
}
