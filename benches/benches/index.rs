//! Building the workspace index for a 100,000-episode workspace once vectors are in memory.
//!
//! Target (issue 4): under 50 ms. The input is what a store layer hands over for such a
//! workspace: counts, 5,000 hot-file aggregates, 400 session summaries and the 1,000 most recent
//! embedded episodes (384-dimensional, the size of bge-small). Two vector sets: eight topics (the
//! common case) and unstructured noise (the worst case for k-means, which then iterates until
//! its churn tolerance for every k). Each bench asserts its result before timing it.

// A bench whose setup or result is wrong must stop loudly, like a test.
#![allow(clippy::unwrap_used)]

use chrono::{DateTime, Duration, TimeZone, Utc};
use codeoid_core::index::{
    ClusterEpisode, ClusterInput, HotFile, IndexConfig, IndexInput, SessionSummary, build_index,
};
use criterion::{Criterion, criterion_group, criterion_main};

const DIM: usize = 384;
const EPISODES: u64 = 100_000;
const EMBEDDED: usize = 1_000;
const TOPICS: usize = 8;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 6, 1, 9, 0, 0).unwrap()
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }
}

fn workspace(topical: bool) -> IndexInput {
    let mut rng = Lcg(42);
    let mut embedded = ClusterInput::new(DIM).unwrap();
    let dirs = [
        "core/src/store",
        "core/src/embed",
        "core/src/retrieve",
        "core/src/tools",
        "web/src/components",
        "web/src/pages",
        "docs/guide",
        "scripts/release",
    ];
    let words = [
        ["migration", "schema"],
        ["tokenizer", "pooling"],
        ["ranking", "bm25"],
        ["timeline", "schema"],
        ["button", "layout"],
        ["routing", "login"],
        ["tutorial", "install"],
        ["changelog", "tagging"],
    ];
    for i in 0..EMBEDDED {
        let topic = (i * 7) % TOPICS;
        let mut v: Vec<f32> = (0..DIM).map(|_| rng.next()).collect();
        if topical {
            for x in &mut v {
                *x *= 0.15;
            }
            v[topic * 40] += 1.0;
            v[topic * 40 + 1] += 0.7;
        }
        let [a, b] = words[topic];
        embedded
            .push(
                &v,
                ClusterEpisode {
                    summary: format!("Edit({}/{a}_{i}.rs) {a} {b} round {i}", dirs[topic]),
                    paths: vec![format!("{}/{a}_{}.rs", dirs[topic], i % 5)],
                    time: now() - Duration::minutes(i as i64),
                },
            )
            .unwrap();
    }
    IndexInput {
        workspace: "monorepo".into(),
        episode_count: EPISODES,
        session_count: 400,
        last_activity: Some(now()),
        hot_files: (0..5_000)
            .map(|i| HotFile {
                path: format!("pkg_{}/src/module_{i}.rs", i % 50),
                touches: 10_000 / (i + 1),
                last_touched: now() - Duration::minutes(i as i64),
            })
            .collect(),
        sessions: (0..400)
            .map(|i| SessionSummary {
                id: format!("session-{i}"),
                first_intent: Some(format!("Work item {i}: tighten the retrieval ranking")),
                last_activity: now() - Duration::hours(i),
            })
            .collect(),
        current_session: Some("session-0".into()),
        embedded,
    }
}

fn bench_index(c: &mut Criterion) {
    let config = IndexConfig::default();
    let roomy = IndexConfig {
        budget_chars: 10_000,
        ..IndexConfig::default()
    };
    for (name, topical) in [("topical", true), ("unstructured", false)] {
        let input = workspace(topical);
        let text = build_index(&input, &config, now()).unwrap();
        assert!(text.chars().count() <= 1_800, "{text}");
        assert!(
            text.starts_with("# Memory Index — monorepo\n100,000 episodes across 400 sessions")
        );
        assert!(text.ends_with("`get_episode(\"<id>\")`\n"), "{text}");
        assert!(text.contains("- [current] Work item 0"), "{text}");
        let full = build_index(&input, &roomy, now()).unwrap();
        let clusters = full.lines().filter(|l| l.starts_with("- **")).count();
        if topical {
            assert_eq!(clusters, TOPICS, "{full}");
            assert!(full.contains("- **src/store: migration"), "{full}");
        } else {
            assert!((2..=TOPICS).contains(&clusters), "{full}");
        }
        c.bench_function(&format!("index/build_100k_episodes_{name}"), |b| {
            b.iter(|| build_index(std::hint::black_box(&input), &config, now()).unwrap())
        });
    }
}

criterion_group!(benches, bench_index);
criterion_main!(benches);
