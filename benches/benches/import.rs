//! Import throughput on real Claude Code logs: the whole `spotter` projects folder (12 files,
//! 9.8 MB, from disk) and its largest transcript parsed from memory; then the same folder into a
//! real store file (`import_into`: parse, workspaces, sessions, turns, episodes, FTS, usage,
//! finish), once into a fresh store and again into a store that already holds it (the periodic
//! re-import of a logs folder). Each iteration checks that the import is complete and correct
//! (sessions, turns and tool calls equal the counts the integration tests verify against an
//! independent script), so a fast wrong import cannot pass.

use std::path::{Path, PathBuf};
use std::time::Duration;

use codeoid_core::import::{self, ImportOptions, LogFormat};
use codeoid_core::store::Store;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

fn evaldata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/evaldata/claude-code-sessions")
}

fn folder_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("evaluation data is present") {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            total += folder_bytes(&path);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            total += std::fs::metadata(&path).expect("stat").len();
        }
    }
    total
}

fn bench_import(c: &mut Criterion) {
    let spotter = evaldata().join("spotter");
    let mut group = c.benchmark_group("import");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));

    group.throughput(Throughput::Bytes(folder_bytes(&spotter)));
    group.bench_function("claude_code_spotter_folder", |b| {
        b.iter(|| {
            let import = import::read_path(&spotter).expect("the folder imports");
            let turns = import.report.turns;
            assert_eq!(import.sessions.len(), 12);
            assert_eq!((turns.user_turns, turns.assistant_turns), (510, 482));
            assert_eq!(turns.tool_calls, 591);
            assert_eq!(import.report.malformed_lines_skipped, 0);
            assert!(import.report.skipped_files.is_empty());
            import
        });
    });

    let largest = spotter.join("4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    let bytes = std::fs::read(&largest).expect("the transcript is readable");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("claude_code_largest_transcript_in_memory", |b| {
        b.iter(|| {
            let import = import::read_bytes(LogFormat::ClaudeCode, &largest, &bytes)
                .expect("line formats never fail");
            let turns = import.report.turns;
            assert_eq!((turns.user_turns, turns.assistant_turns), (141, 139));
            assert_eq!(turns.tool_calls, 150);
            import
        });
    });
    group.finish();
}

/// Turns of the spotter folder (510 user + 482 assistant), what every store import must add.
const SPOTTER_TURNS: u64 = 992;

fn bench_import_into_store(c: &mut Criterion) {
    let spotter = evaldata().join("spotter");
    let options = ImportOptions::default();
    let mut group = c.benchmark_group("import_into_store");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(30))
        .throughput(Throughput::Bytes(folder_bytes(&spotter)));

    group.bench_function("claude_code_spotter_folder_fresh_store", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().expect("a temporary directory");
                let store = Store::open(dir.path().join("codeoid.db")).expect("a new store");
                (dir, store)
            },
            |(dir, store)| {
                let summary = import::import_into(&store, &spotter, &options, &mut |_| {})
                    .expect("the folder imports");
                assert_eq!((summary.sessions_new, summary.sessions_skipped), (12, 0));
                assert_eq!(summary.turns_added, SPOTTER_TURNS);
                assert_eq!(summary.sessions_finished, 12);
                assert!(summary.episodes_added >= 591, "{}", summary.episodes_added);
                (dir, store)
            },
            BatchSize::PerIteration,
        );
    });

    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Store::open(dir.path().join("codeoid.db")).expect("a new store");
    import::import_into(&store, &spotter, &options, &mut |_| {}).expect("the folder imports");
    group.bench_function("claude_code_spotter_folder_again", |b| {
        b.iter(|| {
            let summary = import::import_into(&store, &spotter, &options, &mut |_| {})
                .expect("the folder imports");
            assert_eq!(summary.sessions_unchanged, 12);
            assert_eq!(
                (summary.turns_added, summary.turns_unchanged),
                (0, SPOTTER_TURNS)
            );
            summary
        });
    });
    group.finish();
}

criterion_group!(benches, bench_import, bench_import_into_store);
criterion_main!(benches);
