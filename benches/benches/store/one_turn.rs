//! One-turn latency benches: `store/record_turn_single` (back to back) and
//! `store/record_turn_paced` (a pause before each call, into a store with a history), with their
//! latency percentiles.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use codeoid_core::canonical::{Part, Turn};
use codeoid_core::store::{NewSession, Store};
use criterion::Criterion;

use crate::corpus::{RealCall, exchanges};
use crate::fixtures::{settle, workspace};
use crate::measure::thread_cpu;

/// One `record_turn` per call into a growing session, back to back: the worst case, where the
/// store's background work (checkpoints, idle merges) never finds the writer idle.
pub(crate) fn single(c: &mut Criterion, calls: &[RealCall], prompts: &[String]) {
    let target = std::cell::OnceCell::new();
    let target = || target.get_or_init(|| OneTurnTarget::new("single.db", 0, calls, prompts));
    let mut group = c.benchmark_group("store");
    group.sample_size(50);
    one_turn_calls(&mut group, "record_turn_single", target, None);
    group.finish();
}

/// Exchanges the paced bench's store holds before it is measured: a month of a busy workspace
/// is tens of thousands of episodes, and the depth of the FTS index (its merge work) grows with
/// them.
fn paced_history() -> usize {
    if codeoid_benches::benchmarking() {
        10_000
    } else {
        100
    }
}

/// What a harness does: one `record_turn` per model response or tool result, with the model's
/// or the tool's time between them ([`PACE`], far shorter than a real model call), into a store
/// that already holds a history (about 30,000 episodes).
pub(crate) fn paced(c: &mut Criterion, calls: &[RealCall], prompts: &[String]) {
    let target = std::cell::OnceCell::new();
    let target =
        || target.get_or_init(|| OneTurnTarget::new("paced.db", paced_history(), calls, prompts));
    let mut group = c.benchmark_group("store");
    group.sample_size(10);
    // Criterion sizes a run by wall time, pauses included: 30 s are about 5,000 calls.
    group.warm_up_time(Duration::from_millis(100));
    group.measurement_time(Duration::from_secs(30));
    one_turn_calls(&mut group, "record_turn_paced", target, Some(PACE));
    group.finish();
}

/// The pause before each call of `store/record_turn_paced`.
const PACE: Duration = Duration::from_millis(5);

/// A store, a session in it and the turns one-turn calls record into it, in turn.
struct OneTurnTarget {
    _dir: tempfile::TempDir,
    store: Store,
    session: String,
    pattern: Vec<Turn>,
}

impl OneTurnTarget {
    /// A store file named `file` in a fresh directory, holding `history` exchanges recorded in
    /// batches in a session of their own (its idle merges settled), and an empty session.
    fn new(file: &str, history: usize, calls: &[RealCall], prompts: &[String]) -> OneTurnTarget {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(dir.path().join(file)).expect("store opens");
        let ws = workspace();
        if history > 0 {
            let earlier = store
                .create_session(&ws, NewSession::default())
                .expect("session");
            for start in (0..history).step_by(500) {
                let turns = exchanges(calls, prompts, start, 500.min(history - start));
                store.record_turns(&earlier.id, &turns).expect("recorded");
            }
            settle(&store);
        }
        let session = store
            .create_session(&ws, NewSession::default())
            .expect("session")
            .id;
        OneTurnTarget {
            pattern: exchanges(calls, prompts, history, 2000),
            _dir: dir,
            store,
            session,
        }
    }
}

/// Measures `record_turn` of the target's turns in turn, one per call (ids made unique across
/// laps of the pattern), sleeping `pause` before each call; prints the wall and thread-CPU
/// latency percentiles of every call. The target is built on first use, so filtering the
/// benchmark out skips its setup.
fn one_turn_calls<'t>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    target: impl Fn() -> &'t OneTurnTarget,
    pause: Option<Duration>,
) {
    let latencies = RefCell::new(Vec::new());
    let mut next = 0usize;
    let mut used = None;
    group.bench_function(name, |b| {
        let OneTurnTarget {
            store,
            session,
            pattern,
            ..
        } = target();
        used = Some((store, session));
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut turn = pattern[next % pattern.len()].clone();
                // Unique ids across laps of the pattern.
                let id = format!(
                    "{}-{}",
                    turn.id.as_deref().unwrap_or("t"),
                    next / pattern.len()
                );
                turn.id = Some(id.clone());
                for part in &mut turn.parts {
                    match part {
                        Part::ToolCall(c) => c.id = format!("{}-{}", c.id, next / pattern.len()),
                        Part::ToolResult(r) => {
                            r.call_id = format!("{}-{}", r.call_id, next / pattern.len())
                        }
                        _ => {}
                    }
                }
                next += 1;
                if let Some(pause) = pause {
                    std::thread::sleep(pause);
                }
                let cpu_before = thread_cpu();
                let started = Instant::now();
                let out = store.record_turn(session, &turn).expect("recorded");
                let took = started.elapsed();
                let cpu = thread_cpu().saturating_sub(cpu_before);
                total += took;
                latencies.borrow_mut().push((took, cpu));
                assert!(!out.duplicate);
                assert_eq!(out.turn_id, id);
            }
            total
        });
    });
    let Some((store, session)) = used else {
        return; // filtered out
    };
    let all = latencies.into_inner();
    let mut wall: Vec<Duration> = all.iter().map(|(w, _)| *w).collect();
    let mut cpu: Vec<Duration> = all.iter().map(|(_, c)| *c).collect();
    for (kind, values) in [("wall", &mut wall), ("thread CPU", &mut cpu)] {
        values.sort();
        let pct = |p: f64| values[((values.len() as f64 - 1.0) * p).round() as usize];
        println!(
            "store/{name} {kind} latency over {} calls: p50 {:.1?}, p90 {:.1?}, p99 {:.1?}, p99.9 \
             {:.1?}, max {:.1?}",
            values.len(),
            pct(0.50),
            pct(0.90),
            pct(0.99),
            pct(0.999),
            values[values.len() - 1]
        );
    }
    assert_eq!(
        store.session(session).expect("session").turn_count as usize,
        all.len()
    );
}
