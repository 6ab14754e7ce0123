//! Filters are applied before each channel's candidates are cut: a session, an excluded session,
//! a tool, a time range or a path that only a weak match satisfies still returns that match,
//! even when 60 stronger matches elsewhere fill the candidate pool. Checked with the model (both
//! channels) and lexically (BM25 alone), and for an episode only the vector channel can find.

use codeoid_core::Memory;
use codeoid_core::retrieve::{EmbeddingConfig, ModelChoice, RecallFilters, RecallQuery};
use serde_json::json;

use super::{exchange, model_config, open_in, session};
use crate::store::time;

const QUERY: &str = "parser error unexpected token";

struct Setup {
    _dir: tempfile::TempDir,
    with_model: Memory,
    lexical: Memory,
    session_a: String,
    session_b: String,
    /// B's episode that shares a word ("token") with the query.
    weak: String,
    /// B's episode that shares no word with the query: only its meaning can find it.
    unworded: String,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let with_model = open_in(dir.path(), model_config());
    let lexical = open_in(
        dir.path(),
        codeoid_core::MemoryConfig {
            embedding: EmbeddingConfig {
                model: ModelChoice::Disabled,
                ..EmbeddingConfig::default()
            },
            ..codeoid_core::MemoryConfig::default()
        },
    );
    let session_b = session(&with_model, "lexer work");
    let weak = exchange(
        &with_model,
        &session_b,
        "b1",
        0,
        "why does the lexer stop",
        "Grep",
        json!({"pattern": "fn next_token", "path": "src/lexer.rs"}),
        "src/lexer.rs:88: the token stream ended before the closing quote",
    );
    let unworded = exchange(
        &with_model,
        &session_b,
        "b2",
        10,
        "look at the scanner",
        "Read",
        json!({"file_path": "src/scanner.rs"}),
        "The scanner gives up when the input stops in the middle of a quoted string literal.",
    );
    let session_a = session(&with_model, "parser work");
    for i in 0..60 {
        exchange(
            &with_model,
            &session_a,
            &format!("a{i}"),
            1000 + i * 10,
            "run the parser tests again",
            "Bash",
            json!({"command": format!("cargo test parser_case_{i}")}),
            &format!(
                "test parser_case_{i} ... FAILED\nparser error: unexpected token `}}` at line {i} \
                 in src/parser.rs"
            ),
        );
    }
    with_model.flush().unwrap();
    Setup {
        _dir: dir,
        with_model,
        lexical,
        session_a,
        session_b,
        weak,
        unworded,
    }
}

fn found(memory: &Memory, filters: RecallFilters) -> Vec<String> {
    memory
        .recall(None, &RecallQuery::new(QUERY).limit(20).filters(filters))
        .unwrap()
        .into_iter()
        .map(|h| h.header.id)
        .collect()
}

#[test]
fn every_filter_finds_weak_matches_that_the_unfiltered_pool_cuts() {
    let s = setup();
    // Unfiltered, the 60 strong matches fill every candidate pool.
    for memory in [&s.with_model, &s.lexical] {
        let all = found(memory, RecallFilters::default());
        assert!(!all.contains(&s.weak), "the weak match should rank low");
    }
    let by_session = RecallFilters {
        session_id: Some(s.session_b.clone()),
        ..RecallFilters::default()
    };
    let excluding = RecallFilters {
        exclude_session_id: Some(s.session_a.clone()),
        ..RecallFilters::default()
    };
    let by_tool = RecallFilters {
        tool_name: Some("grep".into()),
        ..RecallFilters::default()
    };
    let early = RecallFilters {
        until: Some(time(100)),
        ..RecallFilters::default()
    };
    let by_path = RecallFilters {
        paths: vec!["src/lexer.rs".into()],
        ..RecallFilters::default()
    };
    let root = s.with_model.workspace().root().to_path_buf();
    let by_absolute_path = RecallFilters {
        paths: vec![root.join("src/lexer.rs").to_string_lossy().into_owned()],
        ..RecallFilters::default()
    };
    for filters in [
        by_session,
        excluding,
        by_tool,
        early,
        by_path,
        by_absolute_path,
    ] {
        for memory in [&s.with_model, &s.lexical] {
            let ids = found(memory, filters.clone());
            assert_eq!(ids.first(), Some(&s.weak), "{filters:?}: {ids:?}");
        }
    }
    // Only the vector channel can find an episode that shares no word with the query.
    let only_b = RecallFilters {
        session_id: Some(s.session_b.clone()),
        ..RecallFilters::default()
    };
    let with_model = found(&s.with_model, only_b.clone());
    assert!(with_model.contains(&s.unworded), "{with_model:?}");
    let lexical = found(&s.lexical, only_b);
    assert!(!lexical.contains(&s.unworded), "{lexical:?}");
    // Time ranges are half-open: since is inclusive, until exclusive.
    let since = RecallFilters {
        since: Some(time(1000 + 59 * 10 + 2)),
        ..RecallFilters::default()
    };
    let last = found(&s.with_model, since);
    assert_eq!(last.len(), 1, "{last:?}");
}

#[test]
fn lexical_only_memory_reports_zero_vec_and_still_ranks() {
    let s = setup();
    let hits = s
        .lexical
        .recall(None, &RecallQuery::new("parser_case_7 FAILED"))
        .unwrap();
    assert_eq!(hits[0].header.summary, "Bash(cargo test parser_case_7)");
    assert!(hits.iter().all(|h| h.components.vec == 0.0));
    assert!(hits[0].components.bm25 == 1.0);
    assert!(s.lexical.warnings().is_empty(), "disabled is not a warning");
}
