//! `store/long_session/*`: what an assistant turn costs in one session that is tens of thousands
//! of turns long and never rotated (a harness that leaves rotation off, a month of one session):
//! the rotation bookkeeping the policy reads after every assistant turn, and a whole
//! `Memory::record_turn` of one assistant turn (after a prompt, which is not measured; the
//! session grows by two turns per iteration, to several times its first length), and, once the
//! session has rotated, where its live context starts (recall looks it up on every call). None
//! may grow with the session.

use std::cell::OnceCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use codeoid_core::canonical::Turn;
use codeoid_core::retrieve::{EmbeddingConfig, ModelChoice};
use codeoid_core::store::{NewSession, Store};
use codeoid_core::{Memory, MemoryConfig};
use criterion::Criterion;

use crate::corpus::{RealCall, exchanges};
use crate::fixtures::{settle, workspace};

/// Exchanges (six turns each, three of them the assistant's) the session holds before it is
/// measured: 40,002 turns when benchmarking, 600 as a smoke test.
fn history() -> usize {
    if codeoid_benches::benchmarking() {
        6_667
    } else {
        100
    }
}

/// A store holding one long session, and memory over it (embeddings off: not on this path).
struct LongSession {
    _dir: tempfile::TempDir,
    memory: Memory,
    store: Arc<Store>,
    session: String,
    assistant_turns: u64,
}

impl LongSession {
    fn new(calls: &[RealCall], prompts: &[String]) -> LongSession {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Arc::new(Store::open(dir.path().join("long.db")).expect("store opens"));
        let session = store
            .create_session(&workspace(), NewSession::default())
            .expect("session")
            .id;
        let history = history();
        for start in (0..history).step_by(500) {
            let turns = exchanges(calls, prompts, start, 500.min(history - start));
            store.record_turns(&session, &turns).expect("recorded");
        }
        settle(&store);
        let config = MemoryConfig {
            embedding: EmbeddingConfig {
                model: ModelChoice::Disabled,
                ..EmbeddingConfig::default()
            },
            ..MemoryConfig::default()
        };
        let memory =
            Memory::for_workspace(Arc::clone(&store), workspace(), config).expect("memory opens");
        println!(
            "store/long_session: one session of {} turns",
            store.session(&session).expect("session").turn_count
        );
        LongSession {
            _dir: dir,
            memory,
            store,
            session,
            assistant_turns: 3 * history as u64,
        }
    }
}

pub(crate) fn long_session(c: &mut Criterion, calls: &[RealCall], prompts: &[String]) {
    let target = OnceCell::new();
    let target = || target.get_or_init(|| LongSession::new(calls, prompts));
    let mut group = c.benchmark_group("store/long_session");
    group.sample_size(10);
    group.bench_function("rotation_bookkeeping", |b| {
        let t = target();
        b.iter(|| {
            let book = t
                .store
                .rotation_bookkeeping(&t.session)
                .expect("bookkeeping");
            assert!(book.assistant_turns_since_rotation >= t.assistant_turns);
            book
        });
    });
    let mut next = 0u64;
    group.bench_function("memory_assistant_turn", |b| {
        let t = target();
        // A prompt (not measured), then the measured answer: the turns alternate as in a session.
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                next += 1;
                let mut prompt = Turn::user_text(format!("Go on with step {next}."));
                prompt.id = Some(format!("bench-prompt-{next}"));
                t.memory.record_turn(&t.session, &prompt).expect("recorded");
                let mut answer = Turn::assistant_text(format!("Step {next} is done."));
                answer.id = Some(format!("bench-answer-{next}"));
                let started = Instant::now();
                let outcome = t.memory.record_turn(&t.session, &answer).expect("recorded");
                total += started.elapsed();
                assert!(!outcome.recorded.duplicate && outcome.decision.is_some());
            }
            total
        });
    });
    // Last, since it rotates the session: recall in a rotated session leaves out its live
    // context, and looks up where that starts on every call.
    let mut rotated = false;
    group.bench_function("live_context_start", |b| {
        let t = target();
        if !rotated {
            t.store
                .rotate_session(&t.session, None, None, None)
                .expect("rotated");
            t.store.take_pending_seed(&t.session).expect("seed taken");
            let after = exchanges(calls, prompts, history(), 1);
            t.store.record_turns(&t.session, &after).expect("recorded");
            rotated = true;
            // The answers recorded above (two turns each) grew the session since it was built.
            println!(
                "store/long_session: rotated at {} turns",
                t.store.session(&t.session).expect("session").turn_count
            );
        }
        b.iter(|| {
            let start = t.store.live_context_start(&t.session).expect("start");
            assert!(start.is_some());
            start
        });
    });
    group.finish();
}
