//! The background embedding worker: lexical-only memory with one warning and a backfill when a
//! model appears, a model change that re-embeds and drops the old vectors once nobody uses that
//! model, episodes left behind
//! by a drop or a SIGKILL embedded at the next open, a drop while the worker is busy, a model
//! downloaded on the worker thread (and a stalled download that blocks nothing, and a flush
//! that gives up when its caller says so), and topic
//! clusters in the workspace index from the worker's vectors, and stored vectors the index
//! refuses embedded again; rotation events are never embedded; episodes a replaced tail deleted
//! leave the index; a model giving non-finite vectors makes the worker give up on those
//! episodes rather than stall.
//!
//! The kill test re-executes this test binary on the ignored test [`child_process`], which
//! reads its role from `CODEOID_IT_CHILD`.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use codeoid_core::retrieve::{EmbeddingConfig, EmbeddingPhase, ModelChoice, RecallQuery};
use codeoid_core::{Memory, MemoryConfig};
use serde_json::json;

use super::{FILLER, exchange, model_config, open_in, record_filler, session};
use crate::embed::checkpoint_copy;
use crate::embed::download::{HubServer, locator};
use crate::store::Unwritable;

const CHILD_TEST: &str = "retrieve::worker::child_process";

/// Distinct episodes of this memory's workspace that have vectors of `model`.
fn embedded(memory: &Memory, model: &str) -> HashSet<String> {
    let mut ids = HashSet::new();
    memory
        .store()
        .for_each_vector(memory.workspace().id(), model, |v| {
            ids.insert(v.episode_id);
            Ok(())
        })
        .unwrap();
    ids
}

fn episode_count(memory: &Memory) -> usize {
    memory
        .store()
        .workspace_stats(memory.workspace().id())
        .unwrap()
        .episodes as usize
}

fn model_id(memory: &Memory) -> String {
    memory.embedding_status().model_id.unwrap()
}

#[test]
fn no_model_means_lexical_recall_with_one_warning_then_a_backfill() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-model-here");
    let lexical = open_in(
        dir.path(),
        MemoryConfig {
            embedding: EmbeddingConfig {
                model: ModelChoice::Dir(missing.clone()),
                ..EmbeddingConfig::default()
            },
            ..MemoryConfig::default()
        },
    );
    let s = session(&lexical, "work");
    record_filler(&lexical, &s, 0);
    lexical.flush().unwrap();
    for _ in 0..5 {
        let hits = lexical
            .recall(None, &RecallQuery::new("install instructions README"))
            .unwrap();
        assert_eq!(hits[0].header.summary, "Read(README.md)");
        assert_eq!(hits[0].components.vec, 0.0);
    }
    let warnings = lexical.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("lexical only"), "{}", warnings[0]);
    assert!(warnings[0].contains("no-model-here"), "{}", warnings[0]);
    assert_eq!(
        lexical.embedding_status().phase,
        EmbeddingPhase::Unavailable
    );
    drop(lexical);

    // The model appears: the next open embeds everything recorded before.
    let memory = open_in(dir.path(), model_config());
    memory.flush().unwrap();
    assert!(memory.warnings().is_empty(), "{:?}", memory.warnings());
    let status = memory.embedding_status();
    assert_eq!(status.phase, EmbeddingPhase::Ready);
    assert_eq!(status.indexed_episodes, FILLER.len());
    assert_eq!(embedded(&memory, &model_id(&memory)).len(), FILLER.len());
    let hits = memory
        .recall(None, &RecallQuery::new("how do I set up the package"))
        .unwrap();
    assert!(hits[0].components.vec > 0.0);
}

#[test]
fn a_read_only_store_is_embedded_in_memory_and_keeps_no_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let lexical = open_in(
        dir.path(),
        MemoryConfig {
            embedding: EmbeddingConfig {
                model: ModelChoice::Disabled,
                ..EmbeddingConfig::default()
            },
            ..MemoryConfig::default()
        },
    );
    let s = session(&lexical, "work");
    record_filler(&lexical, &s, 0);
    drop(lexical);
    let before = std::fs::read(dir.path().join("codeoid.db")).unwrap();
    let Some(_guard) = Unwritable::new(dir.path()) else {
        eprintln!("cannot make a folder read-only in this environment; skipping");
        return;
    };

    let mut config = model_config();
    config.store.read_only = true;
    let memory = open_in(dir.path(), config);
    memory.flush().unwrap();
    assert!(memory.warnings().is_empty(), "{:?}", memory.warnings());
    let status = memory.embedding_status();
    assert_eq!(status.phase, EmbeddingPhase::Ready);
    assert_eq!(status.indexed_episodes, FILLER.len());
    let hits = memory
        .recall(None, &RecallQuery::new("how do I set up the package"))
        .unwrap();
    assert!(hits[0].components.vec > 0.0, "{:?}", hits[0].components);
    assert!(embedded(&memory, &model_id(&memory)).is_empty());
    let err = memory.start_session(Default::default()).unwrap_err();
    assert_eq!(err.kind(), codeoid_core::ErrorKind::Io, "{err}");
    drop(memory);
    assert_eq!(
        std::fs::read(dir.path().join("codeoid.db")).unwrap(),
        before
    );
}

#[test]
fn a_model_change_re_embeds_and_keeps_the_old_vectors_while_that_model_is_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), model_config());
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    memory.flush().unwrap();
    let old = model_id(&memory);
    assert_eq!(embedded(&memory, &old).len(), FILLER.len());
    drop(memory);

    // The same weights with a different window length are a different model id.
    let models = tempfile::tempdir().unwrap();
    let changed = checkpoint_copy(
        models.path(),
        "minilm-128",
        &[(
            "sentence_bert_config.json",
            br#"{"max_seq_length": 128, "do_lower_case": false}"#,
        )],
    );
    let with_changed = |keep_other_models: Duration| MemoryConfig {
        embedding: EmbeddingConfig {
            model: ModelChoice::Dir(changed.clone()),
            keep_other_models,
            ..EmbeddingConfig::default()
        },
        ..MemoryConfig::default()
    };
    let memory = open_in(
        dir.path(),
        with_changed(EmbeddingConfig::default().keep_other_models),
    );
    memory.flush().unwrap();
    let new = model_id(&memory);
    assert_ne!(new, old);
    assert_eq!(embedded(&memory, &new).len(), FILLER.len());
    assert_eq!(memory.embedding_status().indexed_episodes, FILLER.len());
    // The old model was in use a moment ago (another process could still be using it), so its
    // vectors stay: two processes with two models must not delete each other's work.
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        assert_eq!(embedded(&memory, &old).len(), FILLER.len());
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(memory);

    // Nobody has used it within `keep_other_models` (zero here): its vectors go once the new
    // model covers the workspace (right after the backfill).
    let memory = open_in(dir.path(), with_changed(Duration::ZERO));
    memory.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !embedded(&memory, &old).is_empty() {
        assert!(Instant::now() < deadline, "old vectors were not dropped");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn episodes_left_by_a_drop_before_the_worker_ran_are_embedded_at_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), model_config());
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    // Dropped at once: the worker is still loading the model and stops before embedding.
    drop(memory);
    let memory = open_in(dir.path(), model_config());
    let model = memory.retriever().embedder().unwrap().model_id().to_owned();
    let before = embedded(&memory, &model).len();
    memory.flush().unwrap();
    assert!(before < FILLER.len(), "{before} already embedded");
    assert_eq!(embedded(&memory, &model).len(), FILLER.len());
}

/// Entry point of child processes; does nothing unless `CODEOID_IT_CHILD` names a role.
#[test]
#[ignore = "entry point of the child processes the worker tests spawn"]
fn child_process() {
    let Ok(role) = std::env::var("CODEOID_IT_CHILD") else {
        return;
    };
    assert_eq!(role, "memory_writer", "unknown child role");
    let dir = std::path::PathBuf::from(std::env::var("CODEOID_IT_DIR").unwrap());
    let memory = open_in(&dir, model_config());
    let s = session(&memory, "child");
    for i in 0.. {
        let output = format!(
            "test case_{i} ... FAILED\nassertion failed: left == right at src/case_{i}.rs:{i}\n{}",
            "context line\n".repeat(40)
        );
        exchange(
            &memory,
            &s,
            &format!("k{i}"),
            i * 10,
            "run the test suite",
            "Bash",
            json!({"command": format!("cargo test case_{i}")}),
            &output,
        );
        // Printed only after the turns were recorded: an acknowledgement.
        println!("ACK {i}");
    }
}

#[test]
fn a_process_killed_while_embedding_leaves_nothing_the_next_open_does_not_finish() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            CHILD_TEST,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CODEOID_IT_CHILD", "memory_writer")
        .env("CODEOID_IT_DIR", dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut acks = 0;
    for line in BufReader::new(stdout).lines() {
        if line.unwrap().starts_with("ACK ") {
            acks += 1;
        }
        // Enough for the worker to be loading or embedding when the kill lands.
        if acks == 60 {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(acks, 60, "the child stopped early");

    let memory = open_in(dir.path(), model_config());
    memory.store().integrity_check().unwrap();
    let episodes = episode_count(&memory);
    assert!(episodes >= 60, "{episodes} episodes");
    memory.flush().unwrap();
    let model = model_id(&memory);
    assert_eq!(embedded(&memory, &model).len(), episodes);
    assert_eq!(memory.embedding_status().indexed_episodes, episodes);
    let hits = memory
        .recall(None, &RecallQuery::new("assertion failed in case_42"))
        .unwrap();
    assert_eq!(hits[0].header.summary, "Bash(cargo test case_42)");
}

#[test]
fn dropping_memory_while_the_worker_is_busy_is_prompt_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // Batches of one episode: a drop waits for at most one episode's windows, so the bound
    // below holds on a loaded machine too.
    let one_at_a_time = MemoryConfig {
        embedding: EmbeddingConfig {
            batch_episodes: 1,
            ..model_config().embedding
        },
        ..model_config()
    };
    let memory = open_in(dir.path(), one_at_a_time);
    let s = session(&memory, "burst");
    let long = "a line of build output that goes on for a while\n".repeat(100);
    for i in 0..24 {
        exchange(
            &memory,
            &s,
            &format!("b{i}"),
            i * 10,
            "build it",
            "Bash",
            json!({"command": format!("make target_{i}")}),
            &long,
        );
    }
    // Wait until the worker is embedding, then drop in the middle of the backfill.
    let deadline = Instant::now() + Duration::from_secs(60);
    while memory.embedding_status().indexed_episodes == 0 {
        assert!(Instant::now() < deadline, "the worker never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let started = Instant::now();
    drop(memory);
    // At most one long episode is finished first (well under a second on an idle machine).
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );

    let memory = open_in(dir.path(), model_config());
    memory.flush().unwrap();
    let model = model_id(&memory);
    assert_eq!(embedded(&memory, &model).len(), 24);
    assert_eq!(memory.embedding_status().indexed_episodes, 24);
}

#[test]
fn a_missing_model_is_downloaded_on_the_worker_thread_and_then_embeds() {
    let server = HubServer::start();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("hf-cache");
    let config = MemoryConfig {
        embedding: EmbeddingConfig {
            model: ModelChoice::Locate(locator(&server, &cache)),
            ..EmbeddingConfig::default()
        },
        ..MemoryConfig::default()
    };
    let memory = open_in(dir.path(), config);
    // The status reports the download's progress while it runs (what the CLI's bar shows): the
    // weights are ~90 MB, so polling sees them arrive.
    let mut largest_seen = 0;
    while memory.embedding_status().phase == EmbeddingPhase::Downloading {
        if let Some(progress) = memory.embedding_status().download {
            assert!(progress.bytes_done <= progress.bytes_total || progress.bytes_total == 0);
            largest_seen = largest_seen.max(progress.bytes_total);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        largest_seen > 1_000_000,
        "no download progress was reported"
    );
    assert_eq!(memory.embedding_status().download, None);
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    memory.flush().unwrap();
    assert!(memory.warnings().is_empty(), "{:?}", memory.warnings());
    assert_eq!(memory.embedding_status().phase, EmbeddingPhase::Ready);
    assert_eq!(embedded(&memory, &model_id(&memory)).len(), FILLER.len());
    assert!(cache.join("models--BAAI--bge-small-en-v1.5").is_dir());
}

#[test]
fn a_stalled_download_blocks_neither_open_nor_recall_nor_drop() {
    // A server that accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let mut locate = codeoid_core::embed::ModelLocator::from_vars(|_| None);
    locate.hf_cache = Some(dir.path().join("hf-cache"));
    locate.download = Some(codeoid_core::embed::DownloadSource {
        endpoint,
        max_retries: 0,
    });
    let started = Instant::now();
    let memory = open_in(
        dir.path(),
        MemoryConfig {
            embedding: EmbeddingConfig {
                model: ModelChoice::Locate(locate),
                ..EmbeddingConfig::default()
            },
            ..MemoryConfig::default()
        },
    );
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    let hits = memory
        .recall(None, &RecallQuery::new("README install"))
        .unwrap();
    assert_eq!(hits[0].header.summary, "Read(README.md)");
    assert_eq!(memory.embedding_status().phase, EmbeddingPhase::Downloading);
    assert!(!memory.flush_timeout(Duration::from_millis(50)).unwrap());
    // A caller that must notice a Ctrl-C while it waits is asked every 100 ms, and its stop is
    // obeyed at once.
    let mut asked = 0;
    let waited = Instant::now();
    let flushed = memory
        .flush_while(None, &mut || {
            asked += 1;
            asked < 3
        })
        .unwrap();
    assert!(!flushed);
    assert_eq!(asked, 3);
    assert!(
        waited.elapsed() >= Duration::from_millis(300),
        "{:?}",
        waited.elapsed()
    );
    assert!(
        waited.elapsed() < Duration::from_secs(5),
        "{:?}",
        waited.elapsed()
    );
    drop(memory);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    drop(listener);
}

#[test]
fn the_workspace_index_gets_topic_clusters_from_the_worker_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), model_config());
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    // Absolute paths, as Claude Code writes them: the directories above the workspace must not
    // name the topic.
    let file = memory.workspace().root().join("src/parser/expr.rs");
    for i in 0..12 {
        exchange(
            &memory,
            &s,
            &format!("p{i}"),
            1000 + i * 10,
            "fix the parser",
            "Edit",
            json!({"file_path": file, "old_string": "a", "new_string": "b"}),
            &format!("parse error: expected expression after operator at column {i}"),
        );
        exchange(
            &memory,
            &s,
            &format!("d{i}"),
            2000 + i * 10,
            "deploy the service",
            "Bash",
            json!({"command": format!("kubectl rollout status deployment/api-{i}")}),
            "deployment \"api\" successfully rolled out; 3 of 3 replicas available",
        );
        exchange(
            &memory,
            &s,
            &format!("g{i}"),
            1005 + i * 10,
            "fix the parser",
            "Grep",
            json!({"pattern": "fn parse_expr|fn parse_term", "path": "src/parser"}),
            "src/parser/expr.rs:12:fn parse_expr() {}",
        );
    }
    memory.flush().unwrap();
    assert!(episode_count(&memory) >= 30);
    let index = memory.workspace_index(Some(&s)).unwrap();
    assert!(index.contains("## Topic clusters"), "{index}");
    // A search's pattern and scope are not files of the topic.
    assert!(!index.contains("parse_term"), "{index}");
    assert!(index.contains("src/parser/expr.rs"), "{index}");
    assert!(index.contains("episodes, latest"), "{index}");
    let above: Vec<String> = memory
        .workspace()
        .root()
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .map(|c| c.trim_start_matches('.').to_lowercase())
        .filter(|c| c.len() >= 3)
        .collect();
    let labels: Vec<&str> = index
        .lines()
        .filter(|l| l.starts_with("- **"))
        .map(|l| l.split("**").nth(1).unwrap_or(""))
        .collect();
    assert!(!labels.is_empty(), "{index}");
    for label in &labels {
        assert!(
            above
                .iter()
                .all(|word| !label.to_lowercase().contains(word.as_str())),
            "{label:?} is named after the directories above the workspace {above:?}"
        );
    }
    // A harness starting its next session opens memory and builds the block at once: the
    // clusters are there from the first build, not a few turns later (a prompt-cache break).
    drop(memory);
    let reopened = open_in(dir.path(), model_config());
    let first = reopened.workspace_index(None).unwrap();
    assert!(first.contains("## Topic clusters"), "{first}");
}

/// A worker that cannot write the store keeps retrying, but a flush does not wait forever for
/// it: after three failed passes in a row it returns the store's error.
#[test]
fn a_flush_gives_up_when_the_worker_cannot_write_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let config = MemoryConfig {
        embedding: EmbeddingConfig {
            poll_millis: 50,
            ..model_config().embedding
        },
        ..model_config()
    };
    let memory = open_in(dir.path(), config);
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    memory.flush().unwrap();
    // Another connection breaks the table the worker writes vectors into.
    let conn = rusqlite::Connection::open(dir.path().join("codeoid.db")).unwrap();
    conn.execute_batch("DROP TABLE vectors").unwrap();
    let more = session(&memory, "more");
    record_filler(&memory, &more, 100);
    let started = Instant::now();
    let err = memory.flush().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(err.message().contains("flush gave up"), "{err}");
    assert_eq!(err.kind(), codeoid_core::ErrorKind::Database, "{err}");
}

#[test]
fn stored_vectors_the_index_cannot_take_are_embedded_again() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), model_config());
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    memory.flush().unwrap();
    let model = model_id(&memory);
    let victim = embedded(&memory, &model).into_iter().next().unwrap();
    // Vectors of this model but the wrong width (a bug or a damaged file would leave these).
    memory
        .store()
        .put_vectors(&model, &[(victim.clone(), vec![vec![0.6, 0.8, 0.0]])])
        .unwrap();
    drop(memory);

    let memory = open_in(dir.path(), model_config());
    memory.flush().unwrap();
    assert_eq!(memory.embedding_status().indexed_episodes, FILLER.len());
    let mut widths = Vec::new();
    memory
        .store()
        .for_each_vector(memory.workspace().id(), &model, |v| {
            if v.episode_id == victim {
                widths.push(v.vector.len());
            }
            Ok(())
        })
        .unwrap();
    assert!(
        !widths.is_empty() && widths.iter().all(|&w| w == 384),
        "{widths:?}"
    );
}

#[test]
fn rotation_events_are_neither_embedded_nor_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), model_config());
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    let rotation = memory
        .store()
        .rotate_session(&s, None, None, None)
        .unwrap()
        .episode_id;
    memory.flush().unwrap();
    let model = model_id(&memory);
    let vectors = embedded(&memory, &model);
    assert_eq!(vectors.len(), FILLER.len());
    assert!(!vectors.contains(&rotation));
    assert_eq!(episode_count(&memory), FILLER.len() + 1);
    assert_eq!(memory.embedding_status().indexed_episodes, FILLER.len());
}

#[test]
fn episodes_a_replaced_tail_deleted_leave_the_index() {
    use crate::store::{at, call, result};
    use codeoid_core::canonical::Turn;
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), model_config());
    let s = session(&memory, "growing log");
    record_filler(&memory, &s, 0);
    let log = |output: &str| {
        vec![
            at(Turn::user_text("check the build"), "u1", 500),
            at(call("c1", "Bash", json!({"command": "make"})), "a1", 501),
            at(result("c1", output, false), "r1", 502),
            at(Turn::assistant_text("The build passes."), "f1", 503),
            at(Turn::user_text("now the tests"), "u2", 504),
        ]
    };
    let other = session(&memory, "log");
    memory
        .store()
        .sync_turns(&other, 0, &log("make: compiling parser"), false)
        .unwrap();
    memory.flush().unwrap();
    assert_eq!(
        memory.embedding_status().indexed_episodes,
        episode_count(&memory)
    );
    // The log is read again with the call's result complete: its episodes are derived anew.
    let synced = memory
        .store()
        .sync_turns(&other, 0, &log("make: compiling parser\nmake: done"), false)
        .unwrap();
    assert!(synced.episodes_removed >= 1, "{synced:?}");
    memory.flush().unwrap();
    assert_eq!(
        memory.embedding_status().indexed_episodes,
        episode_count(&memory),
        "the deleted episodes are gone from the index too"
    );
}

#[test]
fn a_model_giving_non_finite_vectors_gives_up_on_episodes_instead_of_stalling() {
    // The test model with one LayerNorm's weights set to NaN: every vector it gives is NaN.
    let mut weights = std::fs::read(crate::embed::model_dir().join("model.safetensors")).unwrap();
    let header = u64::from_le_bytes(weights[..8].try_into().unwrap()) as usize;
    let meta: serde_json::Value = serde_json::from_slice(&weights[8..8 + header]).unwrap();
    let offsets = &meta["embeddings.LayerNorm.weight"]["data_offsets"];
    let (start, end) = (
        8 + header + offsets[0].as_u64().unwrap() as usize,
        8 + header + offsets[1].as_u64().unwrap() as usize,
    );
    for value in weights[start..end].chunks_mut(4) {
        value.copy_from_slice(&f32::NAN.to_le_bytes());
    }
    let models = tempfile::tempdir().unwrap();
    let broken = checkpoint_copy(models.path(), "broken", &[("model.safetensors", &weights)]);
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(
        dir.path(),
        MemoryConfig {
            embedding: EmbeddingConfig {
                model: ModelChoice::Dir(broken),
                ..EmbeddingConfig::default()
            },
            ..MemoryConfig::default()
        },
    );
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    // The worker moves on: the flush ends, nothing is indexed, and the failures are reported.
    memory.flush().unwrap();
    assert_eq!(memory.embedding_status().indexed_episodes, 0);
    assert!(
        memory
            .warnings()
            .iter()
            .any(|w| w.contains(&format!("{} episode(s)", FILLER.len()))),
        "{:?}",
        memory.warnings()
    );
    assert!(embedded(&memory, &model_id(&memory)).is_empty());
}
