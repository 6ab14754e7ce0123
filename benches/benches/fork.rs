//! Forking a real session: the largest spotter transcript (280 turns, 3.2 MB of log) imported
//! into a store file, forked at its tip on the same backend (copy turns, resume the chunker,
//! write the fork episode) and for Gemini with a 40k-token window (plus reading the turns,
//! choosing the window, writing the seed and translating what is sent). Each iteration asserts
//! what was copied and handed over.
//!
//! Every fork adds a copy of the session to the store, so the store is restored from a template
//! file every few forks, outside the timed part.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use codeoid_core::fork::{self, ForkOptions, HandoffOptions};
use codeoid_core::import::{self, ImportOptions};
use codeoid_core::store::Store;
use codeoid_core::translate::{Backend, Format};
use criterion::{Criterion, criterion_group, criterion_main};

const SESSION: &str = "4d5611e5-241a-462a-8d15-5122611a9569";

/// Forks made on one copy of the template before it is replaced.
const FORKS_PER_COPY: u64 = 16;

fn log() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/evaldata/claude-code-sessions/spotter")
        .join(format!("{SESSION}.jsonl"))
}

/// A store file holding the imported session, closed (checkpointed) so it can be copied.
fn template(dir: &Path) -> PathBuf {
    let path = dir.join("template.db");
    let store = Store::open(&path).expect("a new store");
    import::import_into(&store, &log(), &ImportOptions::default(), &mut |_| {})
        .expect("the session imports");
    drop(store);
    path
}

/// Times `f` over `iters` forks, on fresh copies of `template`.
fn timed(template: &Path, dir: &Path, iters: u64, f: &dyn Fn(&Store, u64)) -> Duration {
    let mut total = Duration::ZERO;
    let mut store = None;
    for i in 0..iters {
        if i % FORKS_PER_COPY == 0 {
            drop(store.take());
            let copy = dir.join(format!("copy-{}.db", i / FORKS_PER_COPY % 2));
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", copy.display()));
            }
            std::fs::copy(template, &copy).expect("the template copies");
            store = Some(Store::open(&copy).expect("the copy opens"));
        }
        let Some(store) = &store else {
            unreachable!("opened above")
        };
        let started = Instant::now();
        f(store, i);
        total += started.elapsed();
    }
    total
}

fn bench_fork(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let template = template(dir.path());
    let mut group = c.benchmark_group("fork");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(15));

    group.bench_function("real_session_280_turns_at_tip", |b| {
        b.iter_custom(|iters| {
            timed(&template, dir.path(), iters, &|store, i| {
                let forked = fork::fork(store, SESSION, None, None, &format!("fork {i}"))
                    .expect("the session forks");
                assert_eq!(forked.copied_turns, 280);
                assert!(forked.handoff.is_none());
            })
        });
    });

    let gemini = Backend::new(Format::Gemini).with_model("gemini-2.5-pro");
    let options = ForkOptions {
        handoff: HandoffOptions {
            context_window: Some(40_000),
            ..HandoffOptions::default()
        },
        ..ForkOptions::default()
    };
    group.bench_function("real_session_280_turns_to_gemini_40k_window", |b| {
        b.iter_custom(|iters| {
            timed(&template, dir.path(), iters, &|store, i| {
                let forked = fork::fork_with(
                    store,
                    SESSION,
                    None,
                    Some(&gemini),
                    &format!("g {i}"),
                    &options,
                )
                .expect("the session forks");
                let handoff = forked.handoff.expect("a target was given");
                assert!(handoff.window.fits && handoff.omitted_turns() > 100);
                assert!(handoff.seed.is_some());
            })
        });
    });
    group.finish();
}

criterion_group!(benches, bench_fork);
criterion_main!(benches);
