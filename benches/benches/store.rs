//! Episode store benchmarks (issue 2 targets), on a real file with real tool traffic.
//!
//! - `store/ingest_batched`: `record_turns` of 200 exchanges (prompt, two tool calls with their
//!   results, an answer) per call; throughput in episodes/s. Target: >= 20,000 episodes/s.
//! - `store/ingest_real_sessions`: the evaldata Claude Code sessions recorded as they are (one
//!   `record_turns` per session, then its finish), a fresh copy per iteration; episodes/s.
//! - `store/ingest_batched_capped_{256,1024,4096}`: the same with every tool output and prompt cut
//!   to at most that many bytes, for how throughput depends on episode size (no target).
//! - `store/record_turn_single`: one `record_turn` per call into a growing session, back to back;
//!   besides criterion's mean, every call's latency is recorded and p50/p90/p99/p99.9/max are
//!   printed. Target: p99 < 1 ms.
//! - `store/record_turn_paced`: the same with a 5 ms pause before each call (a harness records a
//!   turn per model response or tool result), into a store that already holds about 30,000
//!   episodes and whose FTS merges have settled; the store's background work (checkpoints, FTS
//!   merges) runs in the pauses.
//! - `store/long_session/*`: the rotation bookkeeping and a whole `Memory::record_turn` of an
//!   assistant turn in one session of 40,000 turns that never rotated; neither may grow with the
//!   session.
//! - `store/at_100k/*`: `timeline` first page, a `before` page deep in history, `get_episode`,
//!   their texts and the first `get_episode` page the tool shows, on a store holding 100,000
//!   episodes. Target: < 1 ms each.
//!   Under `cargo test` (one run of each, as a smoke test) the store holds about 900.
//!
//! Tool inputs and outputs are taken from the real Claude Code logs in `../shared/evaldata` (all
//! tool calls of all sessions, cycled), so sizes and contents are those of real sessions.
//! Every benchmark asserts its result.

// The submodules live in `store/`: a crate root looks for `mod` files beside itself,
// hence the paths.
#[path = "store/at_100k.rs"]
mod at_100k;
#[path = "store/corpus.rs"]
mod corpus;
#[path = "store/fixtures.rs"]
mod fixtures;
#[path = "store/ingest.rs"]
mod ingest;
#[path = "store/long_session.rs"]
mod long_session;
#[path = "store/measure.rs"]
mod measure;
#[path = "store/one_turn.rs"]
mod one_turn;

use criterion::{Criterion, criterion_group, criterion_main};

use crate::at_100k::at_100k;
use crate::corpus::corpus;
use crate::ingest::{ingest, ingest_capped, ingest_real_sessions};
use crate::long_session::long_session;
use crate::one_turn::{paced, single};

fn benches(c: &mut Criterion) {
    let (calls, prompts) = corpus();
    ingest(c, "ingest_batched", &calls, &prompts);
    ingest_real_sessions(c);
    for max in [256, 1024, 4096] {
        ingest_capped(c, &calls, &prompts, max);
    }
    single(c, &calls, &prompts);
    paced(c, &calls, &prompts);
    long_session(c, &calls, &prompts);
    at_100k(c, &calls, &prompts);
}

criterion_group!(store_benches, benches);
criterion_main!(store_benches);
