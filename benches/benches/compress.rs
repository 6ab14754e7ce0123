//! Compression: savings on real command output and CPU time per 100 KB.
//!
//! Before measuring anything, this bench
//! - compresses every golden fixture in `fixtures/compress` and asserts the result is exactly the
//!   golden `.out` and loses no fact, then prints the per-rule savings table of
//!   `docs/benchmarks.md`;
//! - replays every Bash call recorded in the spotter Claude Code sessions
//!   (`../shared/evaldata/claude-code-sessions/spotter`) through the rules, asserts no fact is
//!   lost, and prints the whole-session figures.
//!
//! Then it measures `Registry::compress` on the largest fixture of each rule. The target is CPU
//! time, and the bench machine is shared, so the measurement is the benchmark thread's own CPU
//! time (`/proc/thread-self/schedstat`, Linux), not wall time; its throughput is reported
//! directly as milliseconds of CPU per 100 KB of input (the target is under 1).

use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use codeoid_core::compress::Registry;
use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;

/// The episode id the golden outputs are written with.
const FIXTURE_ID: &str = "fixture";

/// Outputs at least this large are "shell-heavy" for the savings target.
const HEAVY: usize = 4096;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

struct Case {
    rule_dir: String,
    name: String,
    command: String,
    input: Vec<u8>,
    expected: Option<String>,
}

fn fixture_cases() -> Vec<Case> {
    let root = workspace_root().join("fixtures/compress");
    let mut cases = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("fixtures/compress exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let rule_dir = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut metas: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("readable fixture directory")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        metas.sort();
        for meta_path in metas {
            let name = meta_path
                .file_stem()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let meta: Value = serde_json::from_slice(&std::fs::read(&meta_path).expect("meta"))
                .expect("meta is JSON");
            cases.push(Case {
                command: meta["command"].as_str().expect("command").to_owned(),
                input: std::fs::read(dir.join(format!("{name}.in"))).expect("input"),
                expected: std::fs::read_to_string(dir.join(format!("{name}.out"))).ok(),
                rule_dir: rule_dir.clone(),
                name,
            });
        }
    }
    cases
}

/// Bytes in and out, per rule.
#[derive(Default)]
struct Tally {
    calls: usize,
    compressed: usize,
    bytes_in: usize,
    bytes_out: usize,
}

impl Tally {
    fn add(&mut self, bytes_in: usize, bytes_out: usize, compressed: bool) {
        self.calls += 1;
        self.compressed += usize::from(compressed);
        self.bytes_in += bytes_in;
        self.bytes_out += bytes_out;
    }

    fn saved(&self) -> f64 {
        if self.bytes_in == 0 {
            0.0
        } else {
            100.0 * (1.0 - self.bytes_out as f64 / self.bytes_in as f64)
        }
    }
}

fn print_table(title: &str, tallies: &BTreeMap<String, Tally>, heavy: &Tally, total: &Tally) {
    println!("\n{title}\n");
    println!("| rule | outputs | compressed | bytes in | bytes out | saved |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (rule, t) in tallies {
        println!(
            "| {rule} | {} | {} | {} | {} | {:.0}% |",
            t.calls,
            t.compressed,
            t.bytes_in,
            t.bytes_out,
            t.saved()
        );
    }
    println!(
        "| **all** | {} | {} | {} | {} | {:.0}% |",
        total.calls,
        total.compressed,
        total.bytes_in,
        total.bytes_out,
        total.saved()
    );
    println!(
        "| **outputs ≥ 4 KiB** | {} | {} | {} | {} | {:.0}% |",
        heavy.calls,
        heavy.compressed,
        heavy.bytes_in,
        heavy.bytes_out,
        heavy.saved()
    );
}

/// Compresses every fixture, checks it against its golden output, prints the savings table.
fn fixture_savings(registry: &Registry) {
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut heavy, mut total) = (Tally::default(), Tally::default());
    for case in fixture_cases() {
        let compressed = registry.compress(&case.command, &case.input);
        let shown = compressed.as_ref().map(|c| c.with_hint(FIXTURE_ID));
        assert_eq!(
            shown, case.expected,
            "{}/{} differs from its golden output",
            case.rule_dir, case.name
        );
        let out = shown.as_ref().map_or(case.input.len(), String::len);
        if let Some(c) = &compressed {
            let missing = registry
                .missing_facts(&c.rule, &case.input, &c.text)
                .expect("known rule");
            assert!(
                missing.is_empty(),
                "{}/{} lost {missing:?}",
                case.rule_dir,
                case.name
            );
        }
        tallies.entry(case.rule_dir.clone()).or_default().add(
            case.input.len(),
            out,
            compressed.is_some(),
        );
        total.add(case.input.len(), out, compressed.is_some());
        if case.input.len() >= HEAVY && case.rule_dir != "passthrough" {
            heavy.add(case.input.len(), out, compressed.is_some());
        }
    }
    print_table(
        "Savings on the golden fixtures (real captured output; bytes out include the hint line)",
        &tallies,
        &heavy,
        &total,
    );
}

/// Every Bash call with a result in the spotter transcripts: (command, output shown to the model).
fn session_calls() -> Vec<(String, String)> {
    let dir = workspace_root().join("../shared/evaldata/claude-code-sessions/spotter");
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut calls = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable transcript");
        let mut pending: HashMap<String, String> = HashMap::new();
        for line in text.lines() {
            let Ok(record) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let Some(parts) = record["message"]["content"].as_array() else {
                continue;
            };
            for part in parts {
                if part["type"] == "tool_use" && part["name"] == "Bash" {
                    if let (Some(id), Some(cmd)) =
                        (part["id"].as_str(), part["input"]["command"].as_str())
                    {
                        pending.insert(id.to_owned(), cmd.to_owned());
                    }
                } else if part["type"] == "tool_result" {
                    let Some(cmd) = part["tool_use_id"]
                        .as_str()
                        .and_then(|id| pending.remove(id))
                    else {
                        continue;
                    };
                    let output = match &part["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(items) => items
                            .iter()
                            .filter(|p| p["type"] == "text")
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        _ => String::new(),
                    };
                    calls.push((cmd, output));
                }
            }
        }
    }
    calls
}

/// Replays the recorded session outputs through the rules and prints the whole-session figures.
fn session_savings(registry: &Registry) {
    let calls = session_calls();
    assert!(
        calls.len() >= 200,
        "only {} recorded Bash calls",
        calls.len()
    );
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut heavy, mut total) = (Tally::default(), Tally::default());
    for (command, output) in &calls {
        let compressed = registry.compress(command, output.as_bytes());
        // The real episode id is not known here; count the hint with a 36-character id.
        let out = compressed
            .as_ref()
            .map_or(output.len(), |c| c.with_hint(&"0".repeat(36)).len());
        if let Some(c) = &compressed {
            let missing = registry
                .missing_facts(&c.rule, output.as_bytes(), &c.text)
                .expect("known rule");
            assert!(missing.is_empty(), "{command:?} lost {missing:?}");
        }
        let rule = registry
            .rule_for(command)
            .unwrap_or("(piped: passes through)")
            .to_owned();
        tallies
            .entry(rule)
            .or_default()
            .add(output.len(), out, compressed.is_some());
        total.add(output.len(), out, compressed.is_some());
        if output.len() >= HEAVY {
            heavy.add(output.len(), out, compressed.is_some());
        }
    }
    print_table(
        "Whole-session replay: every Bash call of the spotter sessions",
        &tallies,
        &heavy,
        &total,
    );
}

/// CPU time of the calling thread, in nanoseconds, from the first field of
/// `/proc/thread-self/schedstat`. The kernel brings it up to date at every scheduler tick and
/// switch, so a reading lags by at most one tick (a few ms); samples here last about 100 ms.
fn thread_cpu_ns() -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat")
        .expect("thread CPU time needs Linux /proc/thread-self/schedstat");
    text.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("schedstat starts with a number")
}

/// Criterion measurement: CPU time of the benchmark thread.
struct ThreadCpu;

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        thread_cpu_ns()
    }

    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Formats CPU nanoseconds as durations, and byte throughput as ms of CPU per 100 KB.
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, typical_ns: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical_ns < 1e3 {
            (1.0, "ns")
        } else if typical_ns < 1e6 {
            (1e-3, "µs")
        } else {
            (1e-6, "ms")
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }

    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let bytes = match *throughput {
            Throughput::Bytes(b) | Throughput::BytesDecimal(b) => b as f64,
            _ => return self.scale_values(0.0, values),
        };
        values
            .iter_mut()
            .for_each(|ns| *ns = *ns / 1e6 * (100_000.0 / bytes));
        "ms CPU/100 KB"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn bench_compress(c: &mut Criterion<ThreadCpu>) {
    let registry = Registry::builtin().expect("built-in rules load");
    fixture_savings(&registry);
    session_savings(&registry);

    // The largest fixture of each rule, compressed from scratch on every iteration.
    let mut largest: BTreeMap<String, Case> = BTreeMap::new();
    for case in fixture_cases() {
        if case.rule_dir == "passthrough" {
            continue;
        }
        let bigger = largest
            .get(&case.rule_dir)
            .is_none_or(|c| c.input.len() < case.input.len());
        if bigger {
            largest.insert(case.rule_dir.clone(), case);
        }
    }
    let mut group = c.benchmark_group("compress");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (rule, case) in &largest {
        let shown = registry
            .compress(&case.command, &case.input)
            .map(|c| c.with_hint(FIXTURE_ID));
        assert_eq!(
            shown, case.expected,
            "{rule}/{} differs from its golden output",
            case.name
        );
        group.throughput(Throughput::Bytes(case.input.len() as u64));
        group.bench_function(format!("{rule}/{}", case.name), |b| {
            b.iter(|| registry.compress(black_box(&case.command), black_box(&case.input)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = bench_compress
}
criterion_main!(benches);
