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
//! - `store/at_100k/*`: `timeline` first page, a `before` page deep in history, `get_episode`,
//!   their texts and the first `get_episode` page the tool shows, on a store holding 100,000
//!   episodes. Target: < 1 ms each.
//!   Under `cargo test` (one run of each, as a smoke test) the store holds about 900.
//!
//! Tool inputs and outputs are taken from the real Claude Code logs in `../shared/evaldata` (all
//! tool calls of all sessions, cycled), so sizes and contents are those of real sessions.
//! Every benchmark asserts its result.

use std::cell::RefCell;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use codeoid_core::canonical::{Part, Role, ToolCall, ToolResult, ToolResultPart, Turn};
use codeoid_core::store::{NewSession, Store, TimelineQuery, Workspace, WorkspaceSource};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;

/// One real tool call: name, input, output.
struct RealCall {
    name: String,
    input: Value,
    output: String,
}

/// Every tool call with a text result in the evaldata Claude Code logs, and the prompts.
fn corpus() -> (Vec<RealCall>, Vec<String>) {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir)
            .expect("evaldata is readable")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/evaldata/claude-code-sessions");
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    let mut inputs = std::collections::HashMap::new();
    let mut calls = Vec::new();
    let mut prompts = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("evaldata log is readable");
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let content = v.pointer("/message/content");
            if let Some(Value::String(s)) = content {
                if v.get("type").and_then(Value::as_str) == Some("user") {
                    prompts.push(s.clone());
                }
            }
            for block in content.and_then(Value::as_array).into_iter().flatten() {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => {
                        let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                        let name = block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        let input = block.get("input").cloned().unwrap_or(Value::Null);
                        inputs.insert(id.to_owned(), (name.to_owned(), input));
                    }
                    Some("tool_result") => {
                        let id = block
                            .get("tool_use_id")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        let output = match block.get("content") {
                            Some(Value::String(s)) => s.clone(),
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        if let Some((name, input)) = inputs.remove(id) {
                            calls.push(RealCall {
                                name,
                                input,
                                output,
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(
        calls.len() > 700 && prompts.len() > 10,
        "evaldata corpus is incomplete"
    );
    (calls, prompts)
}

fn assistant_call(id: &str, call: &RealCall) -> Turn {
    Turn::new(
        Role::Assistant,
        vec![
            Part::Text {
                text: "Let me check that.".to_owned(),
            },
            Part::ToolCall(ToolCall {
                id: id.to_owned(),
                provider_id: None,
                name: call.name.clone(),
                input: call.input.clone(),
            }),
        ],
    )
}

fn tool_result(id: &str, call: &RealCall) -> Turn {
    Turn::new(
        Role::User,
        vec![Part::ToolResult(ToolResult {
            call_id: id.to_owned(),
            parts: vec![ToolResultPart::Text {
                text: call.output.clone(),
            }],
            is_error: false,
        })],
    )
}

/// `n` exchanges starting at corpus position `start`: prompt, two calls with results, answer.
/// Each exchange yields three episodes (two tool calls, and the answer once the next prompt
/// arrives).
fn exchanges(calls: &[RealCall], prompts: &[String], start: usize, n: usize) -> Vec<Turn> {
    let mut turns = Vec::with_capacity(n * 6);
    for i in start..start + n {
        let mut prompt = Turn::user_text(prompts[i % prompts.len()].clone());
        prompt.id = Some(format!("u{i}"));
        turns.push(prompt);
        for k in 0..2 {
            let call = &calls[(2 * i + k) % calls.len()];
            let id = format!("c{i}_{k}");
            let mut a = assistant_call(&id, call);
            a.id = Some(format!("a{i}_{k}"));
            let mut r = tool_result(&id, call);
            r.id = Some(format!("r{i}_{k}"));
            turns.push(a);
            turns.push(r);
        }
        let mut answer = Turn::assistant_text(format!("Done with step {i}."));
        answer.id = Some(format!("f{i}"));
        turns.push(answer);
    }
    turns
}

/// CPU time and run-queue wait of this process so far, summed over its threads (Linux
/// `/proc/self/task/*/schedstat`; zero elsewhere). On a shared machine, wall time minus the wait
/// is what the code itself needs.
fn cpu_and_wait() -> (Duration, Duration, Duration) {
    let read = |path: &Path| -> (u64, u64) {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut fields = text
            .split_whitespace()
            .map(|f| f.parse::<u64>().unwrap_or(0));
        (fields.next().unwrap_or(0), fields.next().unwrap_or(0))
    };
    let (mut cpu, mut wait) = (0, 0);
    for task in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let (c, w) = read(&task.path().join("schedstat"));
        cpu += c;
        wait += w;
    }
    (
        Duration::from_nanos(cpu),
        Duration::from_nanos(wait),
        thread_cpu(),
    )
}

/// CPU time of the calling thread so far, to the nanosecond (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and the clock id is a constant libc defines;
    // clock_gettime writes only into `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Totals across every measured iteration of a benchmark.
#[derive(Default)]
struct Tally {
    items: u64,
    wall: Duration,
    cpu: Duration,
    wait: Duration,
    /// CPU of the calling thread alone (the checkpoint thread excluded).
    caller_cpu: Duration,
}

impl Tally {
    /// Runs `work`, which handles `items` items, and adds what it took; returns its wall time
    /// and its result.
    fn time<T>(&mut self, items: usize, work: impl FnOnce() -> T) -> (Duration, T) {
        let (cpu0, wait0, own0) = cpu_and_wait();
        let started = Instant::now();
        let out = work();
        let took = started.elapsed();
        let (cpu1, wait1, own1) = cpu_and_wait();
        self.items += items as u64;
        self.wall += took;
        self.cpu += cpu1.saturating_sub(cpu0);
        self.wait += wait1.saturating_sub(wait0);
        self.caller_cpu += own1.saturating_sub(own0);
        (took, out)
    }

    fn report(&self, name: &str, unit: &str) {
        if self.items == 0 {
            return; // filtered out
        }
        let per = |d: Duration| self.items as f64 / d.as_secs_f64().max(1e-9);
        println!(
            "{name}: {} {unit} in {:.2?} wall ({:.0} {unit}/s); process CPU {:.2?} ({:.0} {unit} per \
             CPU-second), calling thread CPU {:.2?} ({:.0} {unit} per CPU-second), run-queue wait \
             {:.2?}",
            self.items,
            self.wall,
            per(self.wall),
            self.cpu,
            per(self.cpu),
            self.caller_cpu,
            per(self.caller_cpu),
            self.wait
        );
    }
}

fn workspace() -> Workspace {
    Workspace::from_parts("", "/bench/repo", "/bench/repo", WorkspaceSource::Directory)
}

fn episodes_of(outcomes: &[codeoid_core::store::Recorded]) -> usize {
    outcomes.iter().map(|r| r.episode_ids.len()).sum()
}

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
fn ingest_capped(c: &mut Criterion, calls: &[RealCall], prompts: &[String], max: usize) {
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

fn ingest(c: &mut Criterion, name: &str, calls: &[RealCall], prompts: &[String]) {
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
fn ingest_real_sessions(c: &mut Criterion) {
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

/// One `record_turn` per call into a growing session, back to back: the worst case, where the
/// store's background work (checkpoints, idle merges) never finds the writer idle.
fn single(c: &mut Criterion, calls: &[RealCall], prompts: &[String]) {
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
fn paced(c: &mut Criterion, calls: &[RealCall], prompts: &[String]) {
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

/// Waits until the store's idle FTS merging (which starts after the last write) has stopped
/// changing the index, so that what is measured next does not share the machine with it: FTS5's
/// structure record, which every merge step rewrites, stays the same for half a second.
fn settle(store: &Store) {
    let path = store.path().expect("a store file");
    let conn = rusqlite::Connection::open(path).expect("store opens");
    let structure = || -> Vec<u8> {
        conn.query_row(
            "SELECT block FROM episodes_fts_data WHERE id = 10",
            [],
            |r| r.get(0),
        )
        .expect("the FTS structure record")
    };
    let started = Instant::now();
    let (mut last, mut since) = (structure(), Instant::now());
    while since.elapsed() < Duration::from_millis(500) {
        std::thread::sleep(Duration::from_millis(50));
        let now = structure();
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
    let segments: i64 = conn
        .query_row(
            "SELECT count(DISTINCT segid) FROM episodes_fts_idx",
            [],
            |r| r.get(0),
        )
        .expect("segments");
    println!(
        "store: FTS merges settled at {segments} segments in {:.1?}",
        started.elapsed()
    );
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

fn at_100k(c: &mut Criterion, calls: &[RealCall], prompts: &[String]) {
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
    group.bench_function("lexical_search_k50", |b| {
        let big = big();
        let filters = codeoid_core::store::LexicalFilters::default();
        b.iter(|| {
            let hits = big
                .store
                .lexical_search(
                    big.ws.id(),
                    black_box("failing test in the parser module"),
                    &filters,
                    50,
                )
                .expect("search");
            assert_eq!(hits.len(), 50);
            assert!(hits.windows(2).all(|w| w[0].bm25 >= w[1].bm25));
        });
    });
    group.bench_function("lexical_search_k50_path", |b| {
        let big = big();
        let filters = codeoid_core::store::LexicalFilters::default();
        b.iter(|| {
            let hits = big
                .store
                .lexical_search(
                    big.ws.id(),
                    black_box("services/transcript_renderer.ex"),
                    &filters,
                    50,
                )
                .expect("search");
            assert_eq!(hits.len(), 50);
            assert!(hits.windows(2).all(|w| w[0].bm25 >= w[1].bm25));
        });
    });
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

fn benches(c: &mut Criterion) {
    let (calls, prompts) = corpus();
    ingest(c, "ingest_batched", &calls, &prompts);
    ingest_real_sessions(c);
    for max in [256, 1024, 4096] {
        ingest_capped(c, &calls, &prompts, max);
    }
    single(c, &calls, &prompts);
    paced(c, &calls, &prompts);
    at_100k(c, &calls, &prompts);
}

criterion_group!(store_benches, benches);
criterion_main!(store_benches);
