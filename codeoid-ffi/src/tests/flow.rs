//! The path a harness takes through the C ABI, on a real SQLite file: open, sessions, turns,
//! episodes, timeline, the workspace index, rotation with its seed, compression (pure and with a
//! real command), translation, and reopening the file.

use serde_json::{Value, json};

use super::{Fixture, Out, c, check, exchange};
use crate::*;

fn out_json(f: impl FnOnce(*mut codeoid_string) -> *mut codeoid_error) -> Value {
    let mut out = Out::new();
    check(f(out.ptr())).expect("call succeeds");
    out.json()
}

fn out_text(f: impl FnOnce(*mut codeoid_string) -> *mut codeoid_error) -> String {
    let mut out = Out::new();
    check(f(out.ptr())).expect("call succeeds");
    out.text()
}

#[test]
fn sessions_turns_episodes_and_timeline() {
    let fx = Fixture::new();
    let m = fx.memory;
    let session = fx.session("ses_flow");
    let (sp, sl) = c(&session);

    let mut episode_ids = Vec::new();
    for turn in exchange(1, 20_000) {
        let outcome = fx.record(&session, &turn);
        for id in outcome["recorded"]["episode_ids"].as_array().unwrap() {
            episode_ids.push(id.as_str().unwrap().to_string());
        }
    }
    // The tool call completes with its result (the prompt is its user intent, not an episode of
    // its own); the final answer is buffered until the session finishes.
    assert_eq!(episode_ids.len(), 1, "{episode_ids:?}");
    // SAFETY: valid handle, texts and out-structs.
    let finished = out_json(|o| unsafe { codeoid_memory_finish_session(m, sp, sl, o) });
    assert_eq!(finished.as_array().unwrap().len(), 1, "{finished}");
    let tool_call = &episode_ids[0];

    let (ep, el) = c(tool_call);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let episode = out_json(|o| unsafe { codeoid_memory_episode(m, ep, el, o) });
    assert_eq!(episode["kind"], "tool_call");
    assert_eq!(episode["tool_name"], "Read");
    assert_eq!(episode["session_id"], session.as_str());
    assert!(
        episode["content"]
            .as_str()
            .unwrap()
            .contains("# Tool: Read")
    );
    assert!(
        episode["content"]
            .as_str()
            .unwrap()
            .contains("SCHEMA_VERSION: u32 = 1")
    );
    assert_eq!(
        episode["paths"][0]["relative"],
        "codeoid-core/src/store/schema.rs"
    );
    assert_eq!(episode["paths"][0]["access"], "read");
    assert!(episode["created_at"].as_str().unwrap().ends_with('Z'));

    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let text = out_text(|o| unsafe { codeoid_memory_episode_text(m, sp, sl, ep, el, o) });
    assert!(text.contains("current session"), "{text}");
    assert!(text.contains("SCHEMA_VERSION"), "{text}");

    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let page = out_json(|o| unsafe { codeoid_memory_timeline(m, std::ptr::null(), 0, o) });
    let listed: Vec<&str> = page["episodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), 2, "{page}");
    assert!(listed.contains(&tool_call.as_str()));
    assert!(page["next"].is_null());

    let (qp, ql) = c(r#"{"limit": 1}"#);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let first = out_json(|o| unsafe { codeoid_memory_timeline(m, qp, ql, o) });
    assert_eq!(first["episodes"].as_array().unwrap().len(), 1);
    let next = first["next"].to_string();
    let (np, nl) = c(&next);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let second = out_json(|o| unsafe { codeoid_memory_timeline(m, np, nl, o) });
    assert_ne!(first["episodes"][0]["id"], second["episodes"][0]["id"]);

    let timeline =
        // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
        out_text(|o| unsafe { codeoid_memory_timeline_text(m, sp, sl, std::ptr::null(), 0, o) });
    assert!(
        timeline.contains(&format!("(episode_id: {tool_call})")),
        "{timeline}"
    );

    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let sessions = out_json(|o| unsafe { codeoid_memory_sessions(m, o) });
    assert_eq!(sessions[0]["id"], session.as_str());
    assert_eq!(sessions[0]["turn_count"], 4);
    assert!(
        sessions[0]["first_intent"]
            .as_str()
            .unwrap()
            .contains("migration test 1")
    );
    assert!(!sessions[0]["finished_at"].is_null());

    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let index = out_text(|o| unsafe { codeoid_memory_workspace_index(m, sp, sl, o) });
    assert!(index.starts_with("# Memory Index"), "{index}");
    assert!(
        index.contains("codeoid-core/src/store/schema.rs"),
        "{index}"
    );
    assert!(index.contains("`recall(\"<topic>\")`"), "{index}");

    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let workspace = out_json(|o| unsafe { codeoid_memory_workspace(m, o) });
    assert_eq!(workspace["name"], "project");
    assert!(
        workspace["workspace_id"]
            .as_str()
            .unwrap()
            .starts_with("ws_")
    );
}

#[test]
fn recording_the_same_turn_twice_is_a_no_op_and_bulk_recording_is_atomic() {
    let fx = Fixture::new();
    let m = fx.memory;
    let session = fx.session("ses_bulk");
    let (sp, sl) = c(&session);
    let turns = Value::Array(exchange(7, 1000)).to_string();
    let (tp, tl) = c(&turns);
    // SAFETY: valid arguments.
    let recorded = out_json(|o| unsafe { codeoid_memory_record_turns(m, sp, sl, tp, tl, o) });
    assert_eq!(recorded.as_array().unwrap().len(), 4);
    assert_eq!(recorded[3]["seq"], 3);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let again = out_json(|o| unsafe { codeoid_memory_record_turns(m, sp, sl, tp, tl, o) });
    assert!(
        again
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["duplicate"] == true),
        "{again}"
    );
    let once = fx.record(&session, &exchange(7, 1000)[0]);
    assert_eq!(once["recorded"]["duplicate"], true);
    assert!(once["decision"].is_null(), "user turns get no decision");
}

#[test]
fn rotation_decision_manual_rotation_and_a_seed_taken_once() {
    let fx = Fixture::new();
    let m = fx.memory;
    let session = fx.session("ses_rotate");
    let (sp, sl) = c(&session);
    // SAFETY: valid arguments.
    let none = out_json(|o| unsafe { codeoid_memory_rotation_decision(m, sp, sl, o) });
    assert_eq!(none["reason"], "no_signal");

    // Too early: the guard refuses a manual rotation with the rotation-refused code.
    for turn in exchange(1, 50_000) {
        fx.record(&session, &turn);
    }
    let mut out = Out::new();
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let err = check(unsafe { codeoid_memory_rotate(m, sp, sl, std::ptr::null(), 0, out.ptr()) })
        .unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_ROTATION_REFUSED, "{err:?}");
    assert!(out.0.ptr.is_null());

    for n in 2..=3 {
        for turn in exchange(n, 60_000) {
            let outcome = fx.record(&session, &turn);
            if turn["role"] == "assistant" {
                assert_eq!(outcome["decision"]["should_rotate"], false);
            }
        }
    }
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let decision = out_json(|o| unsafe { codeoid_memory_rotation_decision(m, sp, sl, o) });
    assert_eq!(decision["should_rotate"], false);
    assert_eq!(decision["reason"], "below_threshold");
    assert_eq!(decision["window"]["tokens"], 200_000);
    assert_eq!(decision["tokens"], 60_500);

    // A 1,000-token window override makes the same usage far over the hard threshold.
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    unsafe {
        check(codeoid_memory_set_context_window(m, sp, sl, 100_000)).unwrap();
    }
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let decision = out_json(|o| unsafe { codeoid_memory_rotation_decision(m, sp, sl, o) });
    assert_eq!(decision["window"]["tokens"], 100_000);
    assert_eq!(decision["should_rotate"], false, "below 0.97 of 100k");
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    unsafe {
        check(codeoid_memory_set_context_window(m, sp, sl, 0)).unwrap();
        assert_eq!(
            super::code(codeoid_memory_set_context_window(m, sp, sl, 1)),
            CODEOID_ERROR_INVALID_INPUT
        );
    }

    let (bp, bl) = c("ctx_next");
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let rotation = out_json(|o| unsafe { codeoid_memory_rotate(m, sp, sl, bp, bl, o) });
    assert_eq!(rotation["count"], 1);
    assert_eq!(rotation["backing_context_id"], "ctx_next");
    assert_eq!(rotation["seed"]["kind"], "memory");
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let seed = out_json(|o| unsafe { codeoid_memory_take_seed(m, sp, sl, o) });
    let text = seed["text"].as_str().unwrap();
    assert!(text.starts_with("<rotation_context>"), "{text}");
    assert!(
        text.contains("migration test 3"),
        "the anchor is the last prompt: {text}"
    );
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let gone = out_json(|o| unsafe { codeoid_memory_take_seed(m, sp, sl, o) });
    assert!(gone.is_null(), "a seed is handed out once");
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let session_json = out_json(|o| unsafe { codeoid_memory_session(m, sp, sl, o) });
    assert_eq!(session_json["rotation_count"], 1);
    assert_eq!(session_json["backing_context_id"], "ctx_next");
}

#[test]
fn the_hard_threshold_rotates_while_recording() {
    let fx = Fixture::new();
    let session = fx.session("ses_hard");
    let mut rotated = None;
    for n in 1..=6 {
        for turn in exchange(n, 195_000) {
            let outcome = fx.record(&session, &turn);
            if !outcome["rotation"].is_null() && rotated.is_none() {
                rotated = Some((n, outcome));
            }
        }
    }
    let (n, outcome) = rotated.expect("the hard net fires after the guard");
    assert_eq!(outcome["decision"]["reason"], "hard_threshold");
    assert_eq!(outcome["rotation"]["count"], 1);
    assert!(n >= 3, "not before 5 assistant turns: {n}");
    // The rotation's time is written as every time codeoid stamps: with milliseconds.
    let at = outcome["rotation"]["at"].as_str().expect("a time");
    assert!(millis(at), "rotation at {at}");
}

#[test]
fn turn_timestamps_come_back_as_recorded_and_stamped_times_have_milliseconds() {
    let fx = Fixture::new();
    let m = fx.memory;
    let session = fx.session("ses_times");
    let given = "2026-01-01T00:00:00.123456789Z";
    let outcome = fx.record(
        &session,
        &json!({"id": "t0", "role": "user", "timestamp": given,
                "parts": [{"type": "text", "text": "when?"}]}),
    );
    assert_eq!(outcome["recorded"]["seq"], 0);
    fx.record(
        &session,
        &json!({"id": "t1", "role": "user", "parts": [{"type": "text", "text": "now"}]}),
    );
    let (sp, sl) = c(&session);
    // SAFETY: a live handle, (ptr, len) pairs of live strings and a fresh out-string.
    let turns =
        out_json(|o| unsafe { crate::messages::codeoid_memory_turns(m, sp, sl, 0, u64::MAX, o) });
    assert_eq!(turns[0]["timestamp"], given, "a turn is its own record");
    let stamped = turns[1]["timestamp"]
        .as_str()
        .expect("the store stamps a time");
    assert!(
        chrono::DateTime::parse_from_rfc3339(stamped).is_ok(),
        "{stamped}"
    );
    // SAFETY: as above.
    let record = out_json(|o| unsafe { codeoid_memory_session(m, sp, sl, o) });
    for key in ["created_at", "last_activity_at"] {
        let at = record[key].as_str().expect("a time");
        assert!(millis(at), "{key}: {at}");
    }
}

/// Whether `at` is an RFC 3339 UTC time with exactly milliseconds (`2026-11-30T08:14:36.123Z`).
fn millis(at: &str) -> bool {
    let b = at.as_bytes();
    b.len() == 24
        && b[19] == b'.'
        && b[20..23].iter().all(u8::is_ascii_digit)
        && b[23] == b'Z'
        && chrono::DateTime::parse_from_rfc3339(at).is_ok()
}

#[test]
fn compression_pure_and_through_a_real_command() {
    let fx = Fixture::new();
    let m = fx.memory;
    let session = fx.session("ses_run");
    let mut log = String::new();
    for i in 0..300 {
        log.push_str(&format!("test store::tests::case_{i} ... ok\n"));
    }
    log.push_str("test store::tests::migrates ... FAILED\n\nfailures:\n\n---- store::tests::migrates stdout ----\nassertion failed: version == 3\n\nfailures:\n    store::tests::migrates\n\ntest result: FAILED. 300 passed; 1 failed; 0 ignored\n");
    let (cp, cl) = c("cargo test");
    let (lp, ll) = c(&log);
    // SAFETY: valid arguments.
    let compressed = out_json(|o| unsafe { codeoid_memory_compress(m, cp, cl, lp, ll, o) });
    let text = compressed["text"].as_str().unwrap();
    assert!(text.contains("store::tests::migrates"), "{text}");
    assert!(text.contains("300 passed; 1 failed"), "{text}");
    assert!(compressed["bytes_out"].as_u64().unwrap() < compressed["bytes_in"].as_u64().unwrap());
    assert!(compressed["hint"].is_null());

    // Raw bytes that are not UTF-8 are accepted as output.
    let raw: &[u8] = b"\xff\xfe binary\n";
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let _ = out_json(|o| unsafe {
        codeoid_memory_compress(m, cp, cl, raw.as_ptr().cast(), raw.len(), o)
    });

    let (sp, sl) = c(&session);
    let command =
        "for i in $(seq 1 400); do echo \"src/module_$i.rs\"; done; echo oops >&2; exit 3";
    let (rp, rl) = c(command);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let run = out_json(|o| unsafe { codeoid_memory_run(m, sp, sl, rp, rl, o) });
    assert_eq!(run["exit_code"], 3);
    assert_eq!(run["stderr"], "oops\n");
    let episode_id = run["episode_id"]
        .as_str()
        .expect("raw output stored")
        .to_string();
    // The raw stdout is reachable byte for byte through the episode's blob or content.
    let (ep, el) = c(&episode_id);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let episode = out_json(|o| unsafe { codeoid_memory_episode(m, ep, el, o) });
    let stdout_blob = episode["blobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["role"] == "stdout")
        .map(|b| b["blob_id"].as_str().unwrap().to_string());
    let expected: String = (1..=400).map(|i| format!("src/module_{i}.rs\n")).collect();
    let blob = stdout_blob.expect("the raw stdout is kept as a blob");
    let (bp, bl) = c(&blob);
    let mut out = Out::new();
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    check(unsafe { codeoid_memory_blob(m, bp, bl, out.ptr()) }).unwrap();
    assert_eq!(out.0.as_bytes(), expected.as_bytes());
    // 400 lines of output are shortened (head and tail), and what is shown ends with the hint
    // that names the stored episode.
    let compressed = &run["compressed"];
    assert!(!compressed.is_null(), "{run}");
    let hint = compressed["hint"]
        .as_str()
        .expect("a hint for a stored run");
    assert!(
        hint.contains(&format!("get_episode(\"{episode_id}\")")),
        "{hint}"
    );
    let shown = run["stdout"].as_str().unwrap();
    assert!(shown.trim_end().ends_with(hint), "{shown}");
    assert!(shown.len() < expected.len());
}

#[test]
fn a_run_s_own_timeout_kills_it_and_bad_timeouts_are_refused() {
    let fx = Fixture::new();
    let m = fx.memory;
    let session = fx.session("ses_timeout");
    let (sp, sl) = c(&session);
    let (rp, rl) = c("echo started; sleep 30");
    let started = std::time::Instant::now();
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let run = out_json(|o| unsafe { codeoid_memory_run_with_timeout(m, sp, sl, rp, rl, 0.3, o) });
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(run["timed_out"], true, "{run}");
    assert_eq!(run["exit_code"], 137, "{run}");
    assert!(
        run["stdout"].as_str().unwrap().starts_with("started\n"),
        "{run}"
    );
    // 0 is no timeout: the command ends on its own.
    let (qp, ql) = c("sleep 0.2; echo finished");
    // SAFETY: as above.
    let run = out_json(|o| unsafe { codeoid_memory_run_with_timeout(m, sp, sl, qp, ql, 0.0, o) });
    assert_eq!(
        (&run["timed_out"], &run["stdout"]),
        (&json!(false), &json!("finished\n"))
    );
    for bad in [-1.0, f64::NAN, f64::INFINITY, 2e9] {
        let mut out = Out::new();
        // SAFETY: as above.
        let err =
            check(unsafe { codeoid_memory_run_with_timeout(m, sp, sl, qp, ql, bad, out.ptr()) })
                .unwrap_err();
        assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{bad}");
        assert!(err.message.contains("timeout_secs is"), "{}", err.message);
    }
}

#[test]
fn translation_round_trips_and_reports_losses() {
    let turns = Value::Array(exchange(1, 100)).to_string();
    let (tp, tl) = c(&turns);
    let (mp, ml) = c("gemini-2.5-pro");
    // SAFETY: valid arguments.
    let gemini = out_json(|o| unsafe {
        codeoid_translate_to_messages(
            CODEOID_FORMAT_GEMINI,
            mp,
            ml,
            tp,
            tl,
            std::ptr::null(),
            0,
            o,
        )
    });
    let contents = gemini["messages"].as_array().unwrap();
    assert_eq!(contents[0]["role"], "user");
    assert_eq!(contents[1]["role"], "model");
    let call = contents[1]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p.get("functionCall").is_some())
        .expect("a functionCall part");
    assert_eq!(call["functionCall"]["name"], "Read");

    let messages = gemini["messages"].to_string();
    let (gp, gl) = c(&messages);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let back = out_json(|o| unsafe {
        codeoid_translate_from_messages(
            CODEOID_FORMAT_GEMINI,
            mp,
            ml,
            gp,
            gl,
            std::ptr::null(),
            0,
            o,
        )
    });
    assert_eq!(back["turns"].as_array().unwrap().len(), 4);
    assert_eq!(back["turns"][1]["parts"][1]["name"], "Read");
    assert_eq!(back["turns"][1]["model"], "gemini-2.5-pro");

    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let openai = out_json(|o| unsafe {
        codeoid_translate_to_messages(
            CODEOID_FORMAT_OPENAI_CHAT,
            std::ptr::null(),
            0,
            tp,
            tl,
            std::ptr::null(),
            0,
            o,
        )
    });
    assert_eq!(openai["messages"][2]["role"], "tool");

    let request = json!({
        "system": "You are a careful engineer.",
        "turns": exchange(2, 100),
        "tools": [{"name": "Read", "description": "read a file", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}}],
    })
    .to_string();
    let (qp, ql) = c(&request);
    let (ap, al) = c("claude-sonnet-4-5");
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let body = out_json(|o| unsafe {
        codeoid_translate_to_request(
            CODEOID_FORMAT_ANTHROPIC,
            ap,
            al,
            qp,
            ql,
            std::ptr::null(),
            0,
            o,
        )
    });
    assert_eq!(body["body"]["model"], "claude-sonnet-4-5");
    assert_eq!(body["body"]["system"], "You are a careful engineer.");
    assert_eq!(body["body"]["tools"][0]["name"], "Read");

    // Strict mode turns a loss into a translation error: a harness error part cannot be sent.
    let lossy =
        json!([{"role": "assistant", "parts": [{"type": "error", "message": "API error 529"}]}])
            .to_string();
    let (lp, ll) = c(&lossy);
    let (sp, sl) = c(r#"{"strict": true}"#);
    let mut out = Out::new();
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let err = check(unsafe {
        codeoid_translate_to_messages(
            CODEOID_FORMAT_ANTHROPIC,
            std::ptr::null(),
            0,
            lp,
            ll,
            sp,
            sl,
            out.ptr(),
        )
    })
    .unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_TRANSLATION, "{err:?}");
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let lenient = out_json(|o| unsafe {
        codeoid_translate_to_messages(
            CODEOID_FORMAT_ANTHROPIC,
            std::ptr::null(),
            0,
            lp,
            ll,
            std::ptr::null(),
            0,
            o,
        )
    });
    assert!(
        !lenient["losses"].as_array().unwrap().is_empty(),
        "{lenient}"
    );
}

#[test]
fn a_reopened_store_has_everything() {
    let fx = Fixture::new();
    let session = fx.session("ses_reopen");
    for turn in exchange(1, 100) {
        fx.record(&session, &turn);
    }
    let config = json!({"db_path": fx.dir.path().join("codeoid.db"), "workspace_dir": fx.dir.path().join("project")}).to_string();
    let (p, l) = c(&config);
    let mut again: *mut codeoid_memory = std::ptr::null_mut();
    // SAFETY: valid arguments; the second handle is freed once.
    unsafe {
        check(codeoid_memory_open(p, l, &mut again)).unwrap();
        let sessions = out_json(|o| codeoid_memory_sessions(again, o));
        assert_eq!(sessions[0]["turn_count"], 4);
        codeoid_memory_free(again);
    }
}

#[test]
fn fork_on_the_same_backend_and_handed_to_gemini() {
    let fx = Fixture::new();
    let m = fx.memory;
    let session = fx.session("ses_parent");
    for n in 1..=2 {
        for turn in exchange(n, 1_000) {
            fx.record(&session, &turn);
        }
    }
    let (sp, sl) = c(&session);
    let (np, nl) = c("try the other fix");
    // SAFETY: valid arguments.
    let same = out_json(|o| unsafe {
        codeoid_memory_fork(
            m,
            sp,
            sl,
            3,
            CODEOID_FORMAT_NONE,
            std::ptr::null(),
            0,
            np,
            nl,
            std::ptr::null(),
            0,
            o,
        )
    });
    assert_eq!(same["copied_turns"], 4);
    assert!(same["handoff"].is_null());
    assert_eq!(
        same["session"]["lineage"]["parent_session_id"],
        "ses_parent"
    );
    assert_eq!(same["session"]["lineage"]["at_turn"], 3);
    assert_eq!(same["session"]["lineage"]["kind"], "fork");
    assert_eq!(same["session"]["name"], "try the other fix");

    let (mp, ml) = c("gemini-2.5-pro");
    let (op, ol) = c(r#"{"id": "ses_on_gemini", "handoff": {"budget_fraction": 0.25}}"#);
    let (gp, gl) = c("on gemini");
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let gemini = out_json(|o| unsafe {
        codeoid_memory_fork(
            m,
            sp,
            sl,
            -1,
            CODEOID_FORMAT_GEMINI,
            mp,
            ml,
            gp,
            gl,
            op,
            ol,
            o,
        )
    });
    assert_eq!(gemini["session"]["id"], "ses_on_gemini");
    assert_eq!(gemini["copied_turns"], 8);
    let handoff = &gemini["handoff"];
    assert_eq!(handoff["backend"]["format"], "gemini");
    assert_eq!(
        handoff["budget_tokens"].as_u64().unwrap() * 4,
        handoff["context_window"]["tokens"].as_u64().unwrap()
    );
    let contents = handoff["messages"].to_string();
    assert!(contents.contains("functionCall"), "{contents}");

    // The parent is untouched and both forks are sessions of the workspace.
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let parent = out_json(|o| unsafe { codeoid_memory_session(m, sp, sl, o) });
    assert_eq!(parent["turn_count"], 8);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let sessions = out_json(|o| unsafe { codeoid_memory_sessions(m, o) });
    assert_eq!(sessions.as_array().unwrap().len(), 3);

    let mut out = Out::new();
    let bad: Vec<(u32, i64, &str)> = vec![
        (
            CODEOID_FORMAT_NONE,
            -1,
            r#"{"handoff": {"budget_fractio": 0.5}}"#,
        ),
        (7, -1, "{}"),
        (CODEOID_FORMAT_GEMINI, 99, "{}"),
    ];
    for (format, at, options) in bad {
        let (op, ol) = c(options);
        // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
        let err = check(unsafe {
            codeoid_memory_fork(
                m,
                sp,
                sl,
                at,
                format,
                std::ptr::null(),
                0,
                np,
                nl,
                op,
                ol,
                out.ptr(),
            )
        })
        .unwrap_err();
        assert_eq!(
            err.code, CODEOID_ERROR_INVALID_INPUT,
            "{format} {at} {options}: {err:?}"
        );
    }
    // A model without a target format is a contradiction, not silently ignored.
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let err = check(unsafe {
        codeoid_memory_fork(
            m,
            sp,
            sl,
            -1,
            CODEOID_FORMAT_NONE,
            mp,
            ml,
            np,
            nl,
            std::ptr::null(),
            0,
            out.ptr(),
        )
    })
    .unwrap_err();
    assert!(err.message.contains("`model`"), "{}", err.message);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let sessions = out_json(|o| unsafe { codeoid_memory_sessions(m, o) });
    assert_eq!(
        sessions.as_array().unwrap().len(),
        3,
        "nothing written on error"
    );
}

#[test]
fn import_a_claude_code_log_idempotently() {
    let fx = Fixture::new();
    let m = fx.memory;
    let log = fx.dir.path().join("imp1.jsonl");
    let lines = [
        r#"{"type":"user","uuid":"u1","sessionId":"imp1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"why does the static link fail?"}}"#,
        r#"{"type":"assistant","uuid":"a1","sessionId":"imp1","requestId":"r1","timestamp":"2026-01-01T00:00:05Z","message":{"id":"m1","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":"libcodeoid.a needs -ldl and -lpthread."}],"usage":{"input_tokens":10,"output_tokens":5}}}"#,
        "this line is not JSON",
    ];
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let path = log.to_string_lossy().into_owned();
    let (pp, pl) = c(&path);
    // SAFETY: valid arguments.
    let first = out_json(|o| unsafe { codeoid_memory_import(m, pp, pl, std::ptr::null(), 0, o) });
    assert_eq!(first["sessions_new"], 1, "{first}");
    assert_eq!(first["turns_added"], 2, "{first}");
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let again = out_json(|o| unsafe { codeoid_memory_import(m, pp, pl, std::ptr::null(), 0, o) });
    assert_eq!(again["sessions_new"], 0, "{again}");
    assert_eq!(again["turns_added"], 0, "{again}");
    let (sp, sl) = c("imp1");
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let session = out_json(|o| unsafe { codeoid_memory_session(m, sp, sl, o) });
    assert_eq!(session["turn_count"], 2);

    let mut out = Out::new();
    let (op, ol) = c(r#"{"finish_after": 5}"#);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let err = check(unsafe { codeoid_memory_import(m, pp, pl, op, ol, out.ptr()) }).unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT);
    let (op, ol) = c(r#"{"finish_after_secs": null, "batch_turns": 1}"#);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    check(unsafe { codeoid_memory_import(m, pp, pl, op, ol, out.ptr()) }).unwrap();
    let missing = fx
        .dir
        .path()
        .join("missing.jsonl")
        .to_string_lossy()
        .into_owned();
    let (mp, ml) = c(&missing);
    let mut out = Out::new();
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let err = check(unsafe { codeoid_memory_import(m, mp, ml, std::ptr::null(), 0, out.ptr()) })
        .unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_NOT_FOUND, "{err:?}");
}

#[cfg(unix)]
#[test]
fn an_import_of_logs_whose_names_are_not_utf8_reports_them_lossily() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let fx = Fixture::new();
    let m = fx.memory;
    let logs = fx.dir.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let user = |uuid: &str, timestamp: &str| {
        format!(
            r#"{{"type":"user","uuid":"{uuid}","sessionId":"imp2","timestamp":"{timestamp}","message":{{"role":"user","content":"why does {uuid} fail?"}}}}"#
        )
    };
    let name = |bytes: &[u8]| logs.join(OsStr::from_bytes(bytes));
    // A log with a malformed line (report.malformed) and a bad timestamp (warning_list)...
    let log = [
        user("u1", "2026-01-01T00:00:00Z"),
        user("u2", "yesterday"),
        "this line is not JSON".to_string(),
    ];
    std::fs::write(name(b"a-imp\xff.jsonl"), log.join("\n") + "\n").unwrap();
    // ...another log claiming the same session id (skipped_sessions)...
    std::fs::write(
        name(b"b-copy\xff.jsonl"),
        user("u9", "2026-01-02T00:00:00Z") + "\n",
    )
    .unwrap();
    // ...and a file in no known format (skipped_files).
    std::fs::write(name(b"c-junk\xff.jsonl"), "{\"neither\": 1}\n").unwrap();

    let path = logs.to_string_lossy().into_owned();
    let (pp, pl) = c(&path);
    // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
    let summary = out_json(|o| unsafe { codeoid_memory_import(m, pp, pl, std::ptr::null(), 0, o) });
    assert_eq!(summary["sessions_new"], 1, "{summary}");
    let lossy = |value: &Value| value.as_str().unwrap_or_default().contains('\u{fffd}');
    let report = &summary["report"];
    assert!(lossy(&report["malformed"][0]["path"]), "{summary}");
    assert!(lossy(&report["warning_list"][0]["path"]), "{summary}");
    assert!(lossy(&report["skipped_files"][0]["path"]), "{summary}");
    assert!(
        lossy(&summary["skipped_sessions"][0]["source_path"]),
        "{summary}"
    );
}

#[test]
fn provider_messages_recorded_one_at_a_time_and_read_back_as_turns() {
    let fx = Fixture::new();
    let m = fx.memory;
    let session = fx.session("ses_gemini");
    let (sp, sl) = c(&session);
    let gemini = crate::translate::CODEOID_FORMAT_GEMINI;
    let (mp, ml) = c("gemini-2.5-pro");
    let record = |message: Value, usage: Option<&str>| {
        let text = message.to_string();
        let (tp, tl) = c(&text);
        let (up, ul) = usage.map_or((std::ptr::null(), 0), c);
        // SAFETY: a live handle, (ptr, len) pairs of live strings and a fresh out-string.
        out_json(|o| unsafe {
            crate::messages::codeoid_memory_record_message(
                m, sp, sl, gemini, mp, ml, tp, tl, up, ul, o,
            )
        })
    };
    record(
        json!({"role": "user", "parts": [{"text": "list twice"}]}),
        None,
    );
    // Canonical usage, then Gemini's own `usageMetadata` (cached input inside the prompt count).
    for usage in [
        r#"{"calls": [{"input_tokens": 900, "output_tokens": 10}]}"#,
        r#"{"promptTokenCount": 1900, "cachedContentTokenCount": 1000, "candidatesTokenCount": 10}"#,
    ] {
        record(
            json!({"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]}),
            Some(usage),
        );
        let outcome = record(
            json!({"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a.rs"}}}]}),
            None,
        );
        assert_eq!(
            outcome["recorded"]["episode_ids"].as_array().unwrap().len(),
            1
        );
    }
    let list = json!([
        {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "b.rs"}}}]}
    ])
    .to_string();
    let (lp, ll) = c(&list);
    // SAFETY: a live handle, (ptr, len) pairs of live strings and a fresh out-string.
    let recorded = out_json(|o| unsafe {
        crate::messages::codeoid_memory_record_messages(m, sp, sl, gemini, mp, ml, lp, ll, o)
    });
    assert_eq!(recorded.as_array().unwrap().len(), 2);

    let turns =
        // SAFETY: a live handle, (ptr, len) pairs of live strings and a fresh out-string.
        out_json(|o| unsafe { crate::messages::codeoid_memory_turns(m, sp, sl, 0, u64::MAX, o) });
    let turns = turns.as_array().unwrap();
    assert_eq!(turns.len(), 7);
    let ids = |kind: &str, key: &str| -> Vec<String> {
        turns
            .iter()
            .flat_map(|t| t["parts"].as_array().unwrap())
            .filter(|p| p["type"] == kind)
            .map(|p| p[key].as_str().unwrap().to_owned())
            .collect()
    };
    let calls = ids("tool_call", "id");
    assert_eq!(calls.len(), 3);
    assert_eq!(
        calls.iter().collect::<std::collections::HashSet<_>>().len(),
        3,
        "{calls:?}"
    );
    assert_eq!(
        ids("tool_result", "call_id"),
        calls,
        "each response answers its call"
    );
    assert_eq!(turns[1]["usage"]["calls"][0]["input_tokens"], 900);
    assert_eq!(turns[3]["usage"]["calls"][0]["input_tokens"], 900);
    assert_eq!(turns[3]["usage"]["calls"][0]["cache_read_tokens"], 1000);
    assert_eq!(turns[1]["model"], "gemini-2.5-pro");
    let tail =
        // SAFETY: a live handle, (ptr, len) pairs of live strings and a fresh out-string.
        out_json(|o| unsafe { crate::messages::codeoid_memory_turns(m, sp, sl, 5, u64::MAX, o) });
    assert_eq!(tail.as_array().unwrap().len(), 2);

    // Bad input is a typed error naming the argument, and writes nothing.
    let bad = r#"{"role": "model", "parts": "x"}"#;
    let (bp, bl) = c(bad);
    let mut out = Out::new();
    // SAFETY: a live handle, (ptr, len) pairs of live strings and a fresh out-string.
    let err = check(unsafe {
        crate::messages::codeoid_memory_record_message(
            m,
            sp,
            sl,
            gemini,
            mp,
            ml,
            bp,
            bl,
            std::ptr::null(),
            0,
            out.ptr(),
        )
    })
    .unwrap_err();
    assert_eq!(
        err.code,
        crate::error::CODEOID_ERROR_INVALID_INPUT,
        "{}",
        err.message
    );
    let (np, nl) = c("ses_missing");
    let err =
        // SAFETY: a live handle, (ptr, len) pairs of live strings and a fresh out-string.
        check(unsafe { crate::messages::codeoid_memory_turns(m, np, nl, 0, u64::MAX, out.ptr()) })
            .unwrap_err();
    assert_eq!(
        err.code,
        crate::error::CODEOID_ERROR_NOT_FOUND,
        "{}",
        err.message
    );
}
