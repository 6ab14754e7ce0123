//! Recall and the memory tools through the C functions: lexical recall without a model (the
//! default of these tests), the four tools called by name (failures are results, not errors),
//! the declarations in every provider format, `recall_file` against the file on disk, the
//! embedding settings of the open config, and recall by meaning with the real model from
//! `CODEOID_TEST_MODEL_DIR`.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{CError, Fixture, Out, c, check, exchange};
use crate::*;

/// Recalls `query` from `current` (None: no session) with `options` (None: defaults).
fn recall(
    fx: &Fixture,
    current: Option<&str>,
    query: &str,
    options: Option<&str>,
) -> Result<Value, CError> {
    let (cp, cl) = current.map_or((std::ptr::null(), 0), c);
    let (qp, ql) = c(query);
    let (op, ol) = options.map_or((std::ptr::null(), 0), c);
    let mut out = Out::new();
    // SAFETY: live handle, valid (ptr, len) texts or NULL for optional ones, and an out-struct.
    check(unsafe { codeoid_memory_recall(fx.memory, cp, cl, qp, ql, op, ol, out.ptr()) })?;
    Ok(out.json())
}

/// Calls memory tool `name` from `current` with `arguments`; returns (text, is_error).
fn call_tool(
    fx: &Fixture,
    current: Option<&str>,
    name: &str,
    arguments: Option<&str>,
) -> (String, bool) {
    let (cp, cl) = current.map_or((std::ptr::null(), 0), c);
    let (np, nl) = c(name);
    let (ap, al) = arguments.map_or((std::ptr::null(), 0), c);
    let mut out = Out::new();
    let mut is_error = false;
    // SAFETY: live handle, valid (ptr, len) texts or NULL for optional ones, and out-parameters.
    check(unsafe {
        codeoid_memory_call_tool(fx.memory, cp, cl, np, nl, ap, al, out.ptr(), &mut is_error)
    })
    .expect("call_tool never fails on valid arguments");
    (out.text(), is_error)
}

fn status(fx: &Fixture) -> Value {
    let mut out = Out::new();
    // SAFETY: live handle and out-struct.
    check(unsafe { codeoid_memory_embedding_status(fx.memory, out.ptr()) }).unwrap();
    out.json()
}

fn warnings(fx: &Fixture) -> Vec<String> {
    let mut out = Out::new();
    // SAFETY: live handle and out-struct.
    check(unsafe { codeoid_memory_warnings(fx.memory, out.ptr()) }).unwrap();
    serde_json::from_value(out.json()).expect("an array of strings")
}

fn flush(fx: &Fixture, timeout_ms: i64) -> bool {
    let mut flushed = false;
    // SAFETY: live handle and a writable flag.
    check(unsafe { codeoid_memory_flush(fx.memory, timeout_ms, &mut flushed) }).unwrap();
    flushed
}

fn record_exchanges(fx: &Fixture, session: &str, ns: std::ops::RangeInclusive<usize>) {
    for n in ns {
        for turn in exchange(n, 1_000) {
            fx.record(session, &turn);
        }
    }
}

fn contents(hits: &Value) -> Vec<&str> {
    hits.as_array()
        .expect("an array of hits")
        .iter()
        .map(|h| h["content"].as_str().expect("content"))
        .collect()
}

#[test]
fn recall_finds_a_recorded_episode_lexically_without_a_model() {
    let fx = Fixture::new();
    let a = fx.session("ses_a");
    record_exchanges(&fx, &a, 1..=3);
    let b = fx.session("ses_b");

    let hits = recall(&fx, Some(&b), "migrate_v2", None).unwrap();
    let first = &hits[0];
    assert!(
        first["content"]
            .as_str()
            .unwrap()
            .contains("SCHEMA_VERSION: u32 = 2"),
        "{hits}"
    );
    assert_eq!(first["session_id"], "ses_a");
    assert_eq!(first["kind"], "tool_call");
    assert_eq!(first["tool_name"], "Read");
    assert_eq!(
        first["paths"][0]["relative"],
        "codeoid-core/src/store/schema.rs"
    );
    assert!(first.get("blobs").is_none(), "hits carry no blob list");
    let components = &first["components"];
    assert_eq!(components["vec"], 0.0, "no model: the vector signal is 0");
    assert!(components["bm25"].as_f64().unwrap() > 0.0, "{components}");
    for signal in ["recency", "path"] {
        let value = components[signal].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&value), "{signal}: {value}");
    }
    assert!(first["score"].as_f64().unwrap() > 0.0);
    let relevance = &first["relevance"];
    assert_eq!(relevance["terms"], 1, "{relevance}");
    assert_eq!(
        relevance["held"],
        serde_json::json!(["migrate v2"]),
        "{relevance}"
    );
    assert_eq!(relevance["weak"], false, "{relevance}");
    assert!(
        relevance["lift"].is_null(),
        "no model, no lift: {relevance}"
    );

    // No session excludes nothing; the calling session's own episodes are left out unless asked.
    assert!(!contents(&recall(&fx, None, "SCHEMA_VERSION", None).unwrap()).is_empty());
    let own = recall(&fx, Some(&a), "SCHEMA_VERSION", None).unwrap();
    assert_eq!(own, json!([]), "the current session is excluded");
    let own = recall(
        &fx,
        Some(&a),
        "SCHEMA_VERSION",
        Some(r#"{"include_current_session": true}"#),
    )
    .unwrap();
    assert!(!contents(&own).is_empty());

    // Options: limit and filters.
    let one = recall(&fx, None, "SCHEMA_VERSION", Some(r#"{"limit": 1}"#)).unwrap();
    assert_eq!(one.as_array().unwrap().len(), 1);
    for filters in [
        r#"{"filters": {"tool_name": "Bash"}}"#,
        r#"{"filters": {"session_id": "ses_b"}}"#,
        r#"{"filters": {"until": "2000-01-01T00:00:00Z"}}"#,
        r#"{"filters": {"paths": ["src/other.rs"]}}"#,
    ] {
        let none = recall(&fx, None, "SCHEMA_VERSION", Some(filters)).unwrap();
        assert_eq!(none, json!([]), "{filters}");
    }
    let read = recall(
        &fx,
        None,
        "SCHEMA_VERSION",
        Some(r#"{"filters": {"tool_name": "read", "paths": ["codeoid-core/src/store/schema.rs"]}, "as_of": "2100-01-01T00:00:00Z"}"#),
    )
    .unwrap();
    assert!(
        !contents(&read).is_empty(),
        "tool names are case-insensitive"
    );

    // Bad input is an error, naming what to fix.
    for (options, mention) in [
        (r#"{"limit": 0}"#, "limit"),
        (r#"{"limit": 101}"#, "limit"),
        (r#"{"limt": 3}"#, "limt"),
        (r#"{"filters": {"tool": "Read"}}"#, "tool"),
        (
            r#"{"filters": {"since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"}}"#,
            "since",
        ),
        ("[]", "options_json"),
        // A value of the wrong form names its field, wherever it is.
        (r#"{"as_of": "yesterday"}"#, "at `as_of`"),
        (r#"{"filters": {"since": 3}}"#, "at `filters.since`"),
        (r#"{"limit": 3} trailing"#, "trailing characters"),
    ] {
        let err = recall(&fx, None, "x", Some(options)).unwrap_err();
        assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{options}: {err:?}");
        assert!(err.message.contains(mention), "{options}: {}", err.message);
    }
    let err = recall(&fx, Some("ses_missing"), "x", None).unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_NOT_FOUND, "{err:?}");

    // Without a model the worker has nothing to do.
    assert_eq!(status(&fx)["phase"], "disabled");
    assert!(status(&fx)["model_id"].is_null());
    assert!(warnings(&fx).is_empty());
    assert!(flush(&fx, 0));
    assert!(flush(&fx, -1));
}

#[test]
fn the_memory_tools_answer_by_name_and_failures_are_results() {
    let fx = Fixture::new();
    let a = fx.session("ses_a");
    record_exchanges(&fx, &a, 1..=2);
    let b = fx.session("ses_b");

    let (text, is_error) = call_tool(&fx, Some(&b), "recall", Some(r#"{"query": "migrate_v2"}"#));
    assert!(!is_error, "{text}");
    assert!(text.contains("SCHEMA_VERSION: u32 = 2"), "{text}");
    assert!(text.contains("prior session #1"), "{text}");
    let id_at = text.find("episode_id: ep_").expect("an episode id") + "episode_id: ".len();
    let id: String = text[id_at..]
        .chars()
        .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
        .collect();

    let args = json!({"episode_id": id}).to_string();
    let (episode, is_error) = call_tool(&fx, Some(&b), "get_episode", Some(&args));
    assert!(!is_error, "{episode}");
    assert!(episode.contains("# Tool: Read"), "{episode}");
    // A double-encoded argument object (some harnesses send one) works as well.
    let double = Value::String(args.clone()).to_string();
    let (again, is_error) = call_tool(&fx, Some(&b), "get_episode", Some(&double));
    assert!(!is_error && again == episode, "{again}");

    // Prefixed names, NULL arguments (no arguments) and no current session.
    let (timeline, is_error) = call_tool(&fx, None, "codeoid_memory__timeline", None);
    assert!(!is_error, "{timeline}");
    assert!(
        timeline.contains(&format!("(episode_id: {id})")),
        "{timeline}"
    );
    let (file, is_error) = call_tool(
        &fx,
        Some(&b),
        "recall_file",
        Some(r#"{"path": "codeoid-core/src/store/schema.rs"}"#),
    );
    assert!(!is_error, "{file}");
    assert!(
        file.contains("SCHEMA_VERSION: u32 = 2"),
        "the latest read: {file}"
    );

    // Failures come back as error results that tell the model what to do.
    for (name, arguments, mention) in [
        ("forget", Some("{}"), "unknown memory tool"),
        ("recall", Some(r#"{"query": 5}"#), "query"),
        ("recall", Some("not json"), "not valid JSON"),
        ("recall", None, "query"),
        (
            "get_episode",
            Some(r#"{"episode_id": "ep_missing"}"#),
            "ep_missing",
        ),
        ("timeline", Some(r#"{"pages": 2}"#), "pages"),
    ] {
        let (text, is_error) = call_tool(&fx, Some(&b), name, arguments);
        assert!(is_error, "{name} {arguments:?}: {text}");
        assert!(text.contains(mention), "{name} {arguments:?}: {text}");
    }
    let (text, is_error) = call_tool(
        &fx,
        Some("ses_missing"),
        "recall",
        Some(r#"{"query": "x"}"#),
    );
    assert!(is_error && text.contains("ses_missing"), "{text}");

    // Memory switched off: every tool says so.
    let off = Fixture::with_config(|config| config["memory_enabled"] = json!(false));
    let (text, is_error) = call_tool(&off, None, "recall", Some(r#"{"query": "x"}"#));
    assert!(is_error && text.contains("switched off"), "{text}");
}

#[test]
fn tool_schemas_and_their_declarations_in_every_format() {
    let fx = Fixture::new();
    let schemas = |prefix: Option<&str>| -> Result<Value, CError> {
        let (pp, pl) = prefix.map_or((std::ptr::null(), 0), c);
        let mut out = Out::new();
        // SAFETY: live handle, valid text or NULL, out-struct.
        check(unsafe { codeoid_memory_tool_schemas(fx.memory, pp, pl, out.ptr()) })?;
        Ok(out.json())
    };
    let bare = schemas(None).unwrap();
    let names: Vec<&str> = bare
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["recall", "recall_file", "timeline", "get_episode"]);
    for tool in bare.as_array().unwrap() {
        assert_eq!(tool["input_schema"]["type"], "object", "{tool}");
        assert!(!tool["description"].as_str().unwrap().is_empty());
    }
    let prefixed = schemas(Some("codeoid_memory")).unwrap();
    assert_eq!(prefixed[0]["name"], "codeoid_memory__recall");
    for bad in ["", "has space", "dots.are.out", &"x".repeat(60)] {
        let err = schemas(Some(bad)).unwrap_err();
        assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{bad:?}: {err:?}");
    }

    let declare = |format: u32, tools: &str, options: Option<&str>| -> Result<Value, CError> {
        let (tp, tl) = c(tools);
        let (op, ol) = options.map_or((std::ptr::null(), 0), c);
        let mut out = Out::new();
        // SAFETY: valid texts or NULL, out-struct.
        check(unsafe { codeoid_translate_declare_tools(format, tp, tl, op, ol, out.ptr()) })?;
        Ok(out.json())
    };
    let tools = prefixed.to_string();
    let anthropic = declare(CODEOID_FORMAT_ANTHROPIC, &tools, None).unwrap();
    assert_eq!(anthropic["tools"][0]["name"], "codeoid_memory__recall");
    assert_eq!(anthropic["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(anthropic["losses"], json!([]));
    let chat = declare(CODEOID_FORMAT_OPENAI_CHAT, &tools, None).unwrap();
    assert_eq!(chat["tools"][1]["type"], "function");
    assert_eq!(
        chat["tools"][1]["function"]["name"],
        "codeoid_memory__recall_file"
    );
    let responses = declare(CODEOID_FORMAT_OPENAI_RESPONSES, &tools, None).unwrap();
    assert_eq!(responses["tools"][2]["name"], "codeoid_memory__timeline");
    assert_eq!(responses["tools"][2]["strict"], false);
    let gemini = declare(CODEOID_FORMAT_GEMINI, &tools, None).unwrap();
    let declarations = gemini["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap();
    assert_eq!(declarations.len(), 4, "{gemini}");
    assert_eq!(declarations[3]["name"], "codeoid_memory__get_episode");

    let twice = json!([bare[0], bare[0]]).to_string();
    for (format, tools, options) in [
        (0, "[]", None),
        (CODEOID_FORMAT_GEMINI, "{}", None),
        (CODEOID_FORMAT_ANTHROPIC, twice.as_str(), None),
        (
            CODEOID_FORMAT_ANTHROPIC,
            r#"[{"name": "has space", "input_schema": {"type": "object"}}]"#,
            None,
        ),
        (
            CODEOID_FORMAT_ANTHROPIC,
            "[]",
            Some(r#"{"strictly": true}"#),
        ),
    ] {
        let err = declare(format, tools, options).unwrap_err();
        assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{tools}: {err:?}");
    }

    // The same declarations mount in a whole request body.
    let request = json!({"turns": exchange(1, 10), "tools": bare}).to_string();
    let (rp, rl) = c(&request);
    let mut out = Out::new();
    // SAFETY: valid texts, out-struct.
    check(unsafe {
        codeoid_translate_to_request(
            CODEOID_FORMAT_OPENAI_CHAT,
            std::ptr::null(),
            0,
            rp,
            rl,
            std::ptr::null(),
            0,
            out.ptr(),
        )
    })
    .unwrap();
    assert_eq!(out.json()["body"]["tools"][0]["function"]["name"], "recall");
}

#[test]
fn recall_file_reports_the_latest_read_and_the_file_on_disk() {
    let fx = Fixture::new();
    let relative = "codeoid-core/src/store/schema.rs";
    let file = fx.dir.path().join("project").join(relative);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "pub const SCHEMA_VERSION: u32 = 1;\n").unwrap();
    let a = fx.session("ses_a");
    record_exchanges(&fx, &a, 1..=2);

    let recall_file = |path: &str| -> Value {
        let (pp, pl) = c(path);
        let mut out = Out::new();
        // SAFETY: live handle, valid text, out-struct.
        check(unsafe { codeoid_memory_recall_file(fx.memory, pp, pl, out.ptr()) }).unwrap();
        out.json()
    };
    let found = recall_file(relative);
    assert!(
        found["episode"]["content"]
            .as_str()
            .unwrap()
            .contains("SCHEMA_VERSION: u32 = 2"),
        "the latest read: {found}"
    );
    assert_eq!(found["path"]["relative"], relative);
    assert_eq!(found["path"]["access"], "read");
    assert!(found["path"]["content_hash"].is_string(), "{found}");
    assert_eq!(found["disk"], json!({"state": "unchanged", "reason": null}));
    assert!(found["later_write"].is_null());
    assert!(found["part"].is_null(), "a whole-file read: {found}");
    // A read of a window of another file says so.
    for turn in [
        json!({"id": "w-a", "role": "assistant", "parts": [{"type": "tool_call", "id": "toolu_w",
            "name": "Read", "input": {"file_path": "src/lib.rs", "offset": 10, "limit": 5}}]}),
        json!({"id": "w-r", "role": "user", "parts": [{"type": "tool_result", "call_id": "toolu_w",
            "parts": [{"type": "text", "text": "    10→pub mod store;"}]}]}),
    ] {
        fx.record(&a, &turn);
    }
    let window = recall_file("src/lib.rs");
    assert_eq!(
        window["part"],
        "this read was called with range arguments (offset: 10, limit: 5) and may hold only \
         part of the file"
    );
    assert!(window["passed_over"].is_null(), "no whole read: {window}");
    assert!(found["passed_over"].is_null(), "{found}");
    // A window of the file as the last whole read saw it gives way to that read.
    for turn in [
        json!({"id": "s-a", "role": "assistant", "parts": [{"type": "tool_call", "id": "toolu_s",
            "name": "Read", "input": {"file_path": relative, "offset": 1, "limit": 1}}]}),
        json!({"id": "s-r", "role": "user", "parts": [{"type": "tool_result", "call_id": "toolu_s",
            "parts": [{"type": "text", "text": "     1→pub const SCHEMA_VERSION: u32 = 1;"}]}]}),
    ] {
        fx.record(&a, &turn);
    }
    let whole = recall_file(relative);
    assert_eq!(whole["episode"]["id"], found["episode"]["id"], "{whole}");
    assert!(whole["part"].is_null(), "{whole}");
    let passed_over = &whole["passed_over"];
    assert!(
        passed_over["episode"]["summary"]
            .as_str()
            .is_some_and(|s| s.contains("schema.rs")),
        "{passed_over}"
    );
    assert_ne!(passed_over["episode"]["id"], found["episode"]["id"]);
    assert!(
        passed_over["part"]
            .as_str()
            .is_some_and(|p| p.contains("may hold only part")),
        "{passed_over}"
    );
    // The absolute path finds the same read.
    let absolute = recall_file(&file.to_string_lossy());
    assert_eq!(absolute["episode"]["id"], found["episode"]["id"]);

    std::fs::write(&file, "pub const SCHEMA_VERSION: u32 = 3;\n").unwrap();
    assert_eq!(recall_file(relative)["disk"]["state"], "changed");
    std::fs::remove_file(&file).unwrap();
    assert_eq!(recall_file(relative)["disk"]["state"], "deleted");
    assert_eq!(recall_file("src/never_read.rs"), Value::Null);
}

#[test]
fn hash_live_reads_and_hash_read_files_decide_which_reads_are_hashed() {
    let relative = "codeoid-core/src/store/schema.rs";
    // The content hash of the latest read of `relative` after recording two exchanges, live
    // (`record_turn`) or in bulk (`record_turns`), with the config edited by `edit`.
    let hash_after = |bulk: bool, edit: &dyn Fn(&mut Value)| -> Value {
        let fx = Fixture::with_config(edit);
        let file = fx.dir.path().join("project").join(relative);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "pub const SCHEMA_VERSION: u32 = 1;\n").unwrap();
        let a = fx.session("ses_a");
        if bulk {
            let turns = Value::from(exchange(1, 1_000)).to_string();
            let (sp, sl) = c(&a);
            let (tp, tl) = c(&turns);
            let mut out = Out::new();
            // SAFETY: live handle, valid texts, out-struct.
            check(unsafe { codeoid_memory_record_turns(fx.memory, sp, sl, tp, tl, out.ptr()) })
                .unwrap();
        } else {
            record_exchanges(&fx, &a, 1..=1);
        }
        let (pp, pl) = c(relative);
        let mut out = Out::new();
        // SAFETY: live handle, valid text, out-struct.
        check(unsafe { codeoid_memory_recall_file(fx.memory, pp, pl, out.ptr()) }).unwrap();
        out.json()["path"]["content_hash"].clone()
    };
    // By default a live read is hashed just after it is recorded, a bulk one never.
    assert!(hash_after(false, &|_| {}).is_string());
    assert!(hash_after(true, &|_| {}).is_null());
    // `hash_live_reads: false` opens no file a live session read.
    assert!(hash_after(false, &|c| c["hash_live_reads"] = json!(false)).is_null());
    // `store.hash_read_files` hashes inside the write, bulk recording included.
    let in_the_write = |c: &mut Value| {
        c["hash_live_reads"] = json!(false);
        c["store"] = json!({"hash_read_files": true});
    };
    assert!(hash_after(false, &in_the_write).is_string());
    assert!(hash_after(true, &in_the_write).is_string());
}

/// Opens a fixture whose config has `embeddings`, or returns the error.
fn open_with_embeddings(embeddings: Value) -> Result<Fixture, CError> {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "db_path": dir.path().join("codeoid.db"),
        "workspace_dir": dir.path(),
        "embeddings": embeddings,
    })
    .to_string();
    let (p, l) = c(&config);
    let mut memory = std::ptr::null_mut();
    // SAFETY: valid text and out-pointer.
    check(unsafe { codeoid_memory_open(p, l, &mut memory) })?;
    Ok(Fixture { dir, memory })
}

#[test]
fn the_embedding_settings_choose_the_model() {
    let off = open_with_embeddings(json!({"enabled": false})).unwrap();
    assert_eq!(status(&off)["phase"], "disabled");

    // A model directory that is not a checkpoint: memory opens, recall is lexical, and the
    // warnings say why.
    let missing = open_with_embeddings(json!({"model_dir": "/nonexistent/model"})).unwrap();
    let s = status(&missing);
    assert_eq!(s["phase"], "unavailable", "{s}");
    let w = warnings(&missing);
    assert!(
        w.len() == 1 && w[0].contains("lexical") && w[0].contains("/nonexistent/model"),
        "{w:?}"
    );
    assert!(flush(&missing, -1), "nothing to wait for without a model");
    let session = missing.session("ses_lexical");
    record_exchanges(&missing, &session, 1..=1);
    let hits = recall(&missing, None, "SCHEMA_VERSION", None).unwrap();
    assert!(!contents(&hits).is_empty(), "lexical recall still works");

    // Offline: a model is used only if one is found locally, never downloaded.
    let offline = open_with_embeddings(json!({"download": false})).unwrap();
    assert_ne!(status(&offline)["phase"], "downloading");

    for (embeddings, mention) in [
        (json!({"enabled": false, "model_dir": "/m"}), "model_dir"),
        (json!({"enabled": false, "download": true}), "download"),
        (json!({"model_dir": "/m", "download": true}), "download"),
        (json!({"enabeld": true}), "enabeld"),
        (json!({"model_dir": 5}), "config_json"),
        (json!(false), "config_json"),
    ] {
        let err = open_with_embeddings(embeddings.clone())
            .err()
            .unwrap_or_else(|| panic!("{embeddings} was accepted"));
        assert_eq!(
            err.code, CODEOID_ERROR_INVALID_INPUT,
            "{embeddings}: {err:?}"
        );
        assert!(
            err.message.contains(mention),
            "{embeddings}: {}",
            err.message
        );
    }
}

/// The test model directory; a clear failure (not a skip) when it is not configured, as in the
/// core's model tests.
fn model_dir() -> PathBuf {
    let dir = std::env::var_os("CODEOID_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!(
                "CODEOID_TEST_MODEL_DIR is not set; run: export \
                 CODEOID_TEST_MODEL_DIR=$(./scripts/fetch-test-model.sh)"
            )
        });
    assert!(
        dir.join("model.safetensors").is_file(),
        "{} has no model.safetensors",
        dir.display()
    );
    dir
}

#[test]
fn recall_by_meaning_with_the_real_model() {
    let fx = open_with_embeddings(json!({"model_dir": model_dir()})).unwrap();
    std::fs::create_dir_all(fx.dir.path()).unwrap();
    let a = fx.session("ses_a");
    record_exchanges(&fx, &a, 1..=3);
    assert!(
        flush(&fx, 120_000),
        "the worker embeds three episodes in time"
    );
    let s = status(&fx);
    assert_eq!(s["phase"], "ready", "{s}");
    assert!(s["model_id"].is_string(), "{s}");
    assert!(s["indexed_episodes"].as_u64().unwrap() >= 3, "{s}");
    assert!(warnings(&fx).is_empty(), "{:?}", warnings(&fx));

    let hits = recall(
        &fx,
        None,
        "which constant holds the database schema version?",
        None,
    )
    .unwrap();
    let first = &hits[0];
    assert!(
        first["components"]["vec"].as_f64().unwrap() > 0.0,
        "embedded episodes have a vector signal: {hits}"
    );
    assert!(
        first["content"]
            .as_str()
            .unwrap()
            .contains("SCHEMA_VERSION")
    );
    let (text, is_error) = call_tool(
        &fx,
        None,
        "recall",
        Some(r#"{"query": "schema version constant", "limit": 2}"#),
    );
    assert!(!is_error && text.contains("SCHEMA_VERSION"), "{text}");
}
