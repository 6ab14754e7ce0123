//! The `store/at_100k/*` reads group: timeline pages, lexical search and episode reads on a
//! store holding about 100,000 episodes (about 900 under `cargo test`).

use std::hint::black_box;
use std::time::Instant;

use codeoid_core::store::{NewSession, Store, TimelineQuery, Workspace};
use criterion::Criterion;

use crate::corpus::{RealCall, exchanges};
use crate::fixtures::{episodes_of, settle, workspace};

/// A store with about 100,000 episodes, what the reads are measured against.
struct Big {
    _dir: tempfile::TempDir,
    store: Store,
    ws: Workspace,
    current: String,
    first: Vec<String>,
    middle_id: String,
}

/// Sessions and exchanges per session of the `at_100k` store: 50 x 667 exchanges x 3 episodes,
/// about 100,000 episodes, when benchmarking. `cargo test` runs each benchmark once as a smoke
/// test; there 2 x 150 exchanges (about 900 episodes) exercise the same code without the minute
/// and the gigabyte of disk the full store takes.
fn at_100k_shape() -> (usize, usize) {
    if codeoid_benches::benchmarking() {
        (50, 667)
    } else {
        (2, 150)
    }
}

fn build_100k(calls: &[RealCall], prompts: &[String]) -> Big {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("100k.db")).expect("store opens");
    let ws = workspace();
    let (sessions, per_session) = at_100k_shape();
    let started = Instant::now();
    let mut episodes = 0;
    let mut current = String::new();
    for session in 0..sessions {
        let s = store
            .create_session(&ws, NewSession::default())
            .expect("session");
        for chunk in 0..per_session.div_ceil(100) {
            let n = (per_session - chunk * 100).min(100);
            let turns = exchanges(calls, prompts, session * 1000 + chunk * 100, n);
            episodes += episodes_of(&store.record_turns(&s.id, &turns).expect("recorded"));
        }
        episodes += store.finish_session(&s.id).expect("finished").len();
        current = s.id;
    }
    let stats = store.workspace_stats(ws.id()).expect("stats");
    assert_eq!(stats.episodes as usize, episodes);
    assert!(
        episodes >= sessions * per_session * 3,
        "{episodes} episodes"
    );
    println!(
        "store/at_100k: built {episodes} episodes in {:?}",
        started.elapsed()
    );
    settle(&store);
    let first = store
        .timeline(ws.id(), &TimelineQuery::default())
        .expect("page")
        .episodes
        .into_iter()
        .map(|h| h.id)
        .collect();
    let middle_id = store
        .timeline(
            ws.id(),
            &TimelineQuery {
                offset: episodes as u64 / 2,
                limit: 1,
                before: None,
            },
        )
        .expect("page")
        .episodes[0]
        .id
        .clone();
    Big {
        _dir: dir,
        store,
        ws,
        current,
        first,
        middle_id,
    }
}

pub(crate) fn at_100k(c: &mut Criterion, calls: &[RealCall], prompts: &[String]) {
    // Built on first use, so filtering these benchmarks out skips the build.
    let big = std::cell::OnceCell::new();
    let big = || big.get_or_init(|| build_100k(calls, prompts));
    let mut group = c.benchmark_group("store/at_100k");
    group.bench_function("timeline_first_page", |b| {
        let big = big();
        b.iter(|| {
            let page = big
                .store
                .timeline(big.ws.id(), black_box(&TimelineQuery::default()))
                .expect("page");
            assert_eq!(page.episodes.len(), 20);
            assert_eq!(page.episodes[0].id, big.first[0]);
        });
    });
    group.bench_function("timeline_before_deep", |b| {
        let big = big();
        let deep = TimelineQuery {
            offset: 0,
            limit: 20,
            before: Some(big.middle_id.clone()),
        };
        b.iter(|| {
            let page = big
                .store
                .timeline(big.ws.id(), black_box(&deep))
                .expect("page");
            assert_eq!(page.episodes.len(), 20);
            assert!(page.episodes.iter().all(|h| h.id != big.middle_id));
        });
    });
    group.bench_function("timeline_text", |b| {
        let big = big();
        b.iter(|| {
            let text = big
                .store
                .timeline_text(
                    big.ws.id(),
                    Some(&big.current),
                    black_box(&TimelineQuery::default()),
                )
                .expect("text");
            assert_eq!(text.lines().filter(|l| l.starts_with("- [")).count(), 20);
        });
    });
    for (name, query) in [
        ("lexical_search_k50", "failing test in the parser module"),
        ("lexical_search_k50_path", "services/transcript_renderer.ex"),
    ] {
        group.bench_function(name, |b| {
            let big = big();
            let filters = codeoid_core::store::LexicalFilters::default();
            b.iter(|| {
                let hits = big
                    .store
                    .lexical_search(big.ws.id(), black_box(query), &filters, 50)
                    .expect("search");
                assert_eq!(hits.len(), 50);
                assert!(hits.windows(2).all(|w| w[0].bm25 >= w[1].bm25));
            });
        });
    }
    group.bench_function("get_episode", |b| {
        let big = big();
        let target = &big.first[7];
        b.iter(|| {
            let ep = big
                .store
                .episode(big.ws.id(), black_box(target))
                .expect("episode");
            assert_eq!(&ep.header.id, target);
        });
    });
    group.bench_function("get_episode_text", |b| {
        let big = big();
        let target = &big.first[7];
        b.iter(|| {
            let text = big
                .store
                .episode_text(big.ws.id(), Some(&big.current), black_box(target))
                .expect("text");
            assert!(text.contains(target.as_str()));
        });
    });
    // What the get_episode tool shows: the first page of the whole content.
    group.bench_function("get_episode_page", |b| {
        let big = big();
        let target = &big.first[7];
        b.iter(|| {
            let text = big
                .store
                .episode_page_text(
                    big.ws.id(),
                    Some(&big.current),
                    black_box(target),
                    0,
                    codeoid_core::tools::EPISODE_PAGE_CHARS,
                )
                .expect("page");
            assert!(text.contains(target.as_str()));
        });
    });
    group.finish();
}
