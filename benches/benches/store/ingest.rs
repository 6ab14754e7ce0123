//! Batched ingest benches: `store/ingest_batched`, `store/ingest_batched_capped_*` and
//! `store/ingest_real_sessions`, with their throughput and CPU reports.

use std::cell::RefCell;
use std::hint::black_box;
use std::time::Duration;

use codeoid_core::store::{NewSession, Store};
use criterion::{Criterion, Throughput};

use crate::corpus::{RealCall, exchanges};
use crate::fixtures::{episodes_of, workspace};
use crate::measure::Tally;

/// `text` cut to at most `max` bytes, at a character boundary.
fn capped(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// Batched ingest of the corpus with every tool output and prompt cut to at most `max` bytes:
/// how throughput depends on episode size (the real logs average ~3 KB per episode).
pub(crate) fn ingest_capped(c: &mut Criterion, calls: &[RealCall], prompts: &[String], max: usize) {
    let calls: Vec<RealCall> = calls
        .iter()
        .map(|call| RealCall {
            name: call.name.clone(),
            input: call.input.clone(),
            output: capped(&call.output, max),
        })
        .collect();
    let prompts: Vec<String> = prompts.iter().map(|p| capped(p, max)).collect();
    ingest(c, &format!("ingest_batched_capped_{max}"), &calls, &prompts);
}

pub(crate) fn ingest(c: &mut Criterion, name: &str, calls: &[RealCall], prompts: &[String]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("ingest.db")).expect("store opens");
    let ws = workspace();
    const EXCHANGES: usize = 200;
    let turns = exchanges(calls, prompts, 0, EXCHANGES);
    let expected = 3 * EXCHANGES - 1;
    let mut group = c.benchmark_group("store");
    group.throughput(Throughput::Elements(expected as u64));
    group.sample_size(20);
    let tally = RefCell::new(Tally::default());
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let s = store
                    .create_session(&ws, NewSession::default())
                    .expect("session");
                let (took, out) = tally.borrow_mut().time(expected, || {
                    store
                        .record_turns(&s.id, black_box(&turns))
                        .expect("recorded")
                });
                total += took;
                assert_eq!(episodes_of(&out), expected);
            }
            total
        });
    });
    group.finish();
    let name = format!("store/{name}");
    let tally = tally.into_inner();
    tally.report(&name, "episodes");
    if tally.items == 0 {
        return; // filtered out
    }
    // The size of what was ingested, so the rate can be read as bytes too.
    let s = store
        .create_session(&ws, NewSession::default())
        .expect("session");
    store.record_turns(&s.id, &turns).expect("recorded");
    let headers = store.session_episodes(&s.id).expect("episodes");
    let bytes: usize = headers
        .iter()
        .map(|h| {
            store
                .episode(ws.id(), &h.id)
                .expect("episode")
                .content
                .len()
        })
        .sum();
    println!(
        "{name}: {} episodes per batch, {} bytes of content each on average",
        headers.len(),
        bytes / headers.len().max(1)
    );
}

/// Batched ingest of the real Claude Code sessions as they are (every log of evaldata,
/// subagents included, read by the importer): one `record_turns` per session, then
/// `finish_session`, each copy under fresh session ids. Real exchanges, with their own prompts,
/// calls per prompt, thinking and usage in the turns, against `ingest_batched`'s synthetic
/// exchanges of real calls.
pub(crate) fn ingest_real_sessions(c: &mut Criterion) {
    let sessions = codeoid_benches::real_sessions::claude_sessions();
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("ingest_real.db")).expect("store opens");
    let turns: usize = sessions.iter().map(|s| s.turns.len()).sum();
    let first = codeoid_benches::real_sessions::record_copy(&store, &sessions, 0);
    let per_copy: usize = first
        .iter()
        .map(|id| store.session_episodes(id).expect("episodes").len())
        .sum();
    assert!(per_copy > 800, "the real sessions make {per_copy} episodes");
    let mut group = c.benchmark_group("store");
    group.throughput(Throughput::Elements(per_copy as u64));
    group.sample_size(10);
    let tally = RefCell::new(Tally::default());
    let copy = std::cell::Cell::new(1);
    group.bench_function("ingest_real_sessions", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (took, ids) = tally.borrow_mut().time(per_copy, || {
                    codeoid_benches::real_sessions::record_copy(
                        &store,
                        black_box(&sessions),
                        copy.get(),
                    )
                });
                copy.set(copy.get() + 1);
                total += took;
                assert_eq!(ids.len(), sessions.len());
            }
            total
        });
    });
    group.finish();
    let tally = tally.into_inner();
    tally.report("store/ingest_real_sessions", "episodes");
    if tally.items > 0 {
        let bytes: usize = first
            .iter()
            .flat_map(|id| store.session_episodes(id).expect("episodes"))
            .map(|h| {
                store
                    .episode(&h.workspace_id, &h.id)
                    .expect("episode")
                    .content
                    .len()
            })
            .sum();
        println!(
            "store/ingest_real_sessions: {} sessions, {turns} turns and {per_copy} episodes per \
             copy, {} bytes of content per episode on average",
            sessions.len(),
            bytes / per_copy
        );
    }
}
