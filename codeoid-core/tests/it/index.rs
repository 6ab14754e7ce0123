//! The workspace index through the public API: the pinned block format, deterministic clusters,
//! the 30-episode threshold, the recency cap, the budget, and the scheduler's off switch.

use std::cell::Cell;
use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use codeoid_core::index::{
    ClusterEpisode, ClusterInput, HotFile, IndexConfig, IndexInput, IndexScheduler, ManualClock,
    SessionSummary, build_index,
};

const DIM: usize = 24;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

/// A deterministic generator for test vectors (no randomness from outside the test).
struct Lcg(u64);

impl Lcg {
    fn unit(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }
}

/// One topic of synthetic episodes: a direction in embedding space, a directory and some words.
struct Topic {
    axis: usize,
    dir: &'static str,
    words: [&'static str; 3],
}

const TOPICS: [Topic; 4] = [
    Topic {
        axis: 0,
        dir: "core/src/store",
        words: ["migration", "schema", "sqlite"],
    },
    Topic {
        axis: 5,
        dir: "core/src/embed",
        words: ["tokenizer", "pooling", "bert"],
    },
    Topic {
        axis: 10,
        dir: "web/components",
        words: ["button", "layout", "css"],
    },
    Topic {
        axis: 15,
        dir: "docs/guide",
        words: ["tutorial", "install", "chapter"],
    },
];

/// `per` episodes of each topic in `topics`, interleaved in time (newest first by index), one
/// minute apart and ending `offset_minutes` before `now()`.
fn embedded(
    topics: &[usize],
    per: usize,
    offset_minutes: i64,
    rng: &mut Lcg,
) -> Vec<(Vec<f32>, ClusterEpisode)> {
    let mut out = Vec::new();
    for i in 0..per * topics.len() {
        let topic = &TOPICS[topics[i % topics.len()]];
        let mut v: Vec<f32> = (0..DIM).map(|_| rng.unit() * 0.3).collect();
        v[topic.axis] += 1.0;
        v[topic.axis + 1] += 0.6;
        let round = i / topics.len();
        let word = topic.words[round % 3];
        let other = topic.words[(round + 1) % 3];
        out.push((
            v,
            ClusterEpisode {
                summary: format!("Edit({}/{word}.rs) {word} {other} step {i}", topic.dir),
                paths: vec![format!("{}/{word}.rs", topic.dir)],
                time: now() - Duration::minutes(offset_minutes + i as i64),
            },
        ));
    }
    out
}

fn cluster_input(rows: &[(Vec<f32>, ClusterEpisode)]) -> ClusterInput {
    let mut input = ClusterInput::new(DIM).unwrap();
    for (v, e) in rows {
        input.push(v, e.clone()).unwrap();
    }
    input
}

fn base_input(embedded: ClusterInput) -> IndexInput {
    IndexInput {
        workspace: "codeoid".into(),
        episode_count: 12_345,
        session_count: 3,
        last_activity: Some(now() - Duration::minutes(2)),
        hot_files: vec![
            HotFile {
                path: "core/src/store/schema.rs".into(),
                touches: 31,
                last_touched: now() - Duration::minutes(5),
            },
            HotFile {
                path: "README.md".into(),
                touches: 1,
                last_touched: now() - Duration::days(3),
            },
            HotFile {
                path: "core/src/embed/bert.rs".into(),
                touches: 12,
                last_touched: now() - Duration::hours(2),
            },
        ],
        sessions: vec![
            SessionSummary {
                id: "s-old".into(),
                first_intent: Some("Set up the\n  project   skeleton".into()),
                last_activity: now() - Duration::days(2),
            },
            SessionSummary {
                id: "s-now".into(),
                first_intent: Some("Port the store to WAL mode".into()),
                last_activity: now() - Duration::minutes(2),
            },
            SessionSummary {
                id: "s-mid".into(),
                first_intent: None,
                last_activity: now() - Duration::hours(5),
            },
        ],
        current_session: Some("s-now".into()),
        embedded,
    }
}

#[test]
fn the_block_format_is_pinned() {
    let rows = embedded(&[0, 1, 2], 12, 2, &mut Lcg(1));
    let input = base_input(cluster_input(&rows));
    let text = build_index(&input, &IndexConfig::default(), now()).unwrap();
    let expected = "\
# Memory Index — codeoid
12,345 episodes across 3 sessions · last activity 2m ago
## Topic clusters (call `recall(\"<label>\")` to retrieve)
- **src/store: migration, schema** — 12 episodes, latest 2m ago · core/src/store/migration.rs, core/src/store/schema.rs, core/src/store/sqlite.rs
- **src/embed: bert, pooling** — 12 episodes, latest 3m ago · core/src/embed/tokenizer.rs, core/src/embed/pooling.rs, core/src/embed/bert.rs
- **web/components: button, css** — 12 episodes, latest 4m ago · web/components/button.rs, web/components/layout.rs, web/components/css.rs
## Hot files (call `recall_file(path)` before reading)
- core/src/store/schema.rs — 31 touches, last 5m ago
- core/src/embed/bert.rs — 12 touches, last 2h ago
- README.md — 1 touch, last 3d ago
## Recent sessions
- [current] Port the store to WAL mode
- [5h ago] (no prompt recorded)
- [2d ago] Set up the project skeleton
## Memory tools
- `recall(\"<topic>\")`, `recall_file(\"<path>\")`, `timeline()`, `get_episode(\"<id>\")`
";
    assert_eq!(text, expected);
    assert!(text.chars().count() <= 1_800);
}

#[test]
fn the_same_input_gives_byte_identical_text_whatever_the_insertion_order() {
    let rows = embedded(&[0, 1, 2, 3], 15, 0, &mut Lcg(9));
    let input = base_input(cluster_input(&rows));
    let first = build_index(&input, &IndexConfig::default(), now()).unwrap();
    assert_eq!(
        build_index(&input, &IndexConfig::default(), now()).unwrap(),
        first
    );
    // Times are unique, so the builder's recency order does not depend on insertion order.
    let mut reversed = rows.clone();
    reversed.reverse();
    reversed.swap(3, 40);
    let shuffled = base_input(cluster_input(&reversed));
    assert_eq!(
        build_index(&shuffled, &IndexConfig::default(), now()).unwrap(),
        first
    );
}

fn cluster_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("- **")).collect()
}

#[test]
fn well_separated_topics_are_recovered_with_their_sizes() {
    // Four topics of unequal size: 20, 15, 10 and 8 episodes.
    let mut rows = Vec::new();
    let mut rng = Lcg(3);
    for (topic, per) in [(0, 20), (1, 15), (2, 10), (3, 8)] {
        rows.extend(embedded(&[topic], per, rows.len() as i64, &mut rng));
    }
    let text = build_index(
        &base_input(cluster_input(&rows)),
        &IndexConfig::default(),
        now(),
    )
    .unwrap();
    let lines = cluster_lines(&text);
    assert_eq!(lines.len(), 4, "{text}");
    for (line, (dir, size)) in lines.iter().zip([
        ("src/store", 20),
        ("src/embed", 15),
        ("web/components", 10),
        ("docs/guide", 8),
    ]) {
        assert!(line.starts_with(&format!("- **{dir}: ")), "{line}");
        assert!(line.contains(&format!("** — {size} episodes,")), "{line}");
    }
}

#[test]
fn clusters_need_thirty_embedded_episodes() {
    let rows = embedded(&[0, 1], 15, 0, &mut Lcg(5));
    let with_30 = build_index(
        &base_input(cluster_input(&rows)),
        &IndexConfig::default(),
        now(),
    )
    .unwrap();
    assert!(with_30.contains("## Topic clusters"), "{with_30}");
    let without = build_index(
        &base_input(cluster_input(&rows[..29])),
        &IndexConfig::default(),
        now(),
    )
    .unwrap();
    assert!(!without.contains("## Topic clusters"), "{without}");
    assert!(cluster_lines(&without).is_empty());
    // Zero vectors carry no direction: they do not count towards the thirty.
    let mut padded = rows[..29].to_vec();
    padded.push((vec![0.0; DIM], rows[29].1.clone()));
    let padded = build_index(
        &base_input(cluster_input(&padded)),
        &IndexConfig::default(),
        now(),
    )
    .unwrap();
    assert!(!padded.contains("## Topic clusters"));
}

#[test]
fn only_the_most_recent_thousand_episodes_are_clustered() {
    // 1,000 recent episodes of two topics and 200 older ones of a third.
    let mut rng = Lcg(11);
    let mut rows = embedded(&[0, 1], 500, 0, &mut rng);
    rows.extend(embedded(&[3], 200, 2_000, &mut rng));
    let text = build_index(
        &base_input(cluster_input(&rows)),
        &IndexConfig::default(),
        now(),
    )
    .unwrap();
    let lines = cluster_lines(&text);
    assert_eq!(lines.len(), 2, "{text}");
    assert!(!text.contains("docs/guide"), "{text}");
    let members: u32 = lines
        .iter()
        .map(|l| {
            l.split("** — ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .replace(',', "")
                .parse::<u32>()
                .unwrap()
        })
        .sum();
    assert_eq!(members, 1_000);
}

/// A workspace with far more to say than the budget allows.
fn crowded() -> IndexInput {
    let rows = embedded(&[0, 1, 2, 3], 20, 0, &mut Lcg(21));
    let mut input = base_input(cluster_input(&rows));
    input.hot_files = (0..40)
        .map(|i| HotFile {
            path: format!("crates/module_{i:02}/src/some/deeply/nested/path/file_{i:02}.rs"),
            touches: 100 - i,
            last_touched: now() - Duration::minutes(i as i64),
        })
        .collect();
    input.sessions = (0..12)
        .map(|i| SessionSummary {
            id: format!("s{i}"),
            first_intent: Some(format!(
                "{i}: {}",
                "refactor the retrieval layer ".repeat(8)
            )),
            last_activity: now() - Duration::hours(i),
        })
        .collect();
    input.current_session = Some("s3".into());
    input
}

#[test]
fn the_budget_drops_clusters_and_hot_files_first_and_keeps_the_tool_lines() {
    let input = crowded();
    let text = build_index(&input, &IndexConfig::default(), now()).unwrap();
    assert!(
        text.chars().count() <= 1_800,
        "{} chars",
        text.chars().count()
    );
    assert!(text.ends_with(
        "## Memory tools\n- `recall(\"<topic>\")`, `recall_file(\"<path>\")`, `timeline()`, `get_episode(\"<id>\")`\n"
    ));
    // All five sessions survive: clusters and hot files were trimmed instead.
    let sessions: Vec<&str> = text.lines().filter(|l| l.starts_with("- [")).collect();
    assert_eq!(sessions.len(), 5, "{text}");
    assert!(
        sessions[0].starts_with("- [current] 3: refactor"),
        "{}",
        sessions[0]
    );
    for s in &sessions {
        let intent = s.split_once("] ").unwrap().1;
        assert_eq!(intent.chars().count(), 100, "{s}");
        assert!(intent.ends_with('…'), "{s}");
    }
    let hot = text
        .lines()
        .filter(|l| l.contains(" touches, last "))
        .count();
    assert!(hot < 10, "{hot} hot files kept");
    // What is kept is the top of each ranking.
    if hot > 0 {
        assert!(text.contains("file_00.rs — 100 touches"), "{text}");
    }

    // A tight budget leaves the title, the fingerprint and the tools.
    let tight = IndexConfig {
        budget_chars: 400,
        ..IndexConfig::default()
    };
    let text = build_index(&input, &tight, now()).unwrap();
    assert!(text.chars().count() <= 400, "{text}");
    assert!(text.starts_with("# Memory Index — codeoid\n"));
    assert!(text.contains("## Memory tools\n- `recall("));
    assert!(
        !text.contains("## Topic clusters") && !text.contains("## Hot files"),
        "{text}"
    );

    // Bigger budgets only ever add lines.
    let mut previous = 0;
    for budget in (400..=4_000).step_by(200) {
        let config = IndexConfig {
            budget_chars: budget,
            ..IndexConfig::default()
        };
        let text = build_index(&input, &config, now()).unwrap();
        assert!(text.chars().count() <= budget);
        let lines = text.lines().count();
        assert!(lines >= previous, "budget {budget}");
        previous = lines;
    }
}

#[test]
fn an_empty_workspace_gives_an_empty_string() {
    let mut input = base_input(ClusterInput::none());
    input.episode_count = 0;
    input.hot_files.clear();
    input.sessions.clear();
    assert_eq!(
        build_index(&input, &IndexConfig::default(), now()).unwrap(),
        ""
    );
}

#[test]
fn an_invalid_config_is_an_error_not_a_broken_block() {
    let config = IndexConfig {
        budget_chars: 10,
        ..IndexConfig::default()
    };
    let err = build_index(&base_input(ClusterInput::none()), &config, now()).unwrap_err();
    assert_eq!(err.kind(), codeoid_core::ErrorKind::InvalidInput);
    assert!(err.message().contains("10 characters"), "{}", err.message());
}

#[test]
fn the_environment_off_switch_really_turns_the_index_off() {
    let config = IndexConfig::from_lookup(|name| {
        (name == "CODEOID_WORKSPACE_INDEX").then(|| "0".to_string())
    })
    .unwrap();
    let clock = Arc::new(ManualClock::new(now()));
    let mut scheduler = IndexScheduler::new(config.clone(), clock.clone()).unwrap();
    let input = crowded();
    let calls = Cell::new(0);
    for _ in 0..5 {
        let text = scheduler
            .refresh(input.episode_count, |at| {
                calls.set(calls.get() + 1);
                build_index(&input, &config, at)
            })
            .unwrap();
        assert_eq!(text, "");
        clock.advance(120);
    }
    assert_eq!(calls.get(), 0);
    // And building directly with the disabled config gives nothing either.
    assert_eq!(build_index(&input, &config, now()).unwrap(), "");
}

#[test]
fn the_scheduled_text_is_byte_stable_between_rebuilds() {
    let config = IndexConfig::default();
    let clock = Arc::new(ManualClock::new(now()));
    let mut scheduler = IndexScheduler::new(config.clone(), clock.clone()).unwrap();
    let mut input = crowded();
    let first = scheduler
        .refresh(input.episode_count, |at| build_index(&input, &config, at))
        .unwrap()
        .to_string();
    // Time passes and up to four episodes arrive: the "ago" texts would change if rebuilt.
    for step in 1..=4 {
        clock.advance(14);
        input.episode_count += 1;
        let text = scheduler
            .refresh(input.episode_count, |at| build_index(&input, &config, at))
            .unwrap();
        assert_eq!(text, first, "step {step}");
    }
    input.episode_count += 1;
    let rebuilt = scheduler
        .refresh(input.episode_count, |at| build_index(&input, &config, at))
        .unwrap();
    assert_ne!(rebuilt, first, "the fifth new episode rebuilds");
    assert!(rebuilt.contains("12,350 episodes"), "{rebuilt}");
}

/// Hot files through `Memory`: the model's own `recall_file` calls (bare or prefixed) look at
/// memory, not at the file, so they are not touches.
#[test]
fn memory_tool_calls_are_not_file_touches() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let memory = crate::retrieve::open_in(dir.path(), crate::tools::lexical_config());
    let s = crate::retrieve::session(&memory, "work");
    for (i, tool) in [
        "Read",
        "Read",
        "recall_file",
        "codeoid_memory__recall_file",
        "mcp__codeoid__recall_file",
    ]
    .iter()
    .enumerate()
    {
        let input = if tool.ends_with("recall_file") {
            json!({"path": "src/a.py"})
        } else {
            json!({"file_path": "src/a.py"})
        };
        crate::retrieve::exchange(
            &memory,
            &s,
            &format!("k{i}"),
            10 * i as i64,
            "look at a.py",
            tool,
            input,
            "A = 1\n",
        );
    }
    let index = memory.workspace_index(Some(&s)).unwrap();
    assert!(index.contains("- src/a.py — 2 touches, last "), "{index}");
    assert_eq!(
        memory
            .store()
            .hot_files(memory.workspace().id(), 10)
            .unwrap()[0]
            .touches,
        2
    );
}
