//! The calling contract, function by function: every pointer argument NULL, every text argument
//! invalid UTF-8, lengths that lie, bad enum integers, JSON of the wrong shape, double frees, and
//! the error code table. The list of calls is checked against the committed header, so a new
//! export without a test fails here.

use std::collections::BTreeSet;
use std::ffi::{CStr, c_char};

use codeoid_core::ErrorKind;

use super::{CError, Fixture, Out, c, check, code};
use crate::error::*;
use crate::memory::*;
use crate::strings::{codeoid_string, codeoid_string_free};
use crate::translate::*;
use crate::*;

type Text = (*const c_char, usize);
/// A call with one text argument and an out-string.
type TextCall<'a> = dyn Fn(Text, *mut codeoid_string) -> *mut codeoid_error + 'a;
/// A uniform signature over the exported functions.
type Invoke = unsafe fn(*const codeoid_memory, &[Text], *mut codeoid_string) -> *mut codeoid_error;

/// One exported function that takes a memory handle or text and an out-string.
pub(crate) struct Call {
    pub(crate) name: &'static str,
    /// Whether the first argument is a `codeoid_memory *`.
    memory: bool,
    /// Text arguments: name, whether NULL is allowed, whether it must be UTF-8.
    texts: Vec<(&'static str, bool, bool)>,
    /// The out-parameter's name, if any.
    out: Option<&'static str>,
    pub(crate) invoke: Invoke,
}

fn call(
    name: &'static str,
    memory: bool,
    texts: &[(&'static str, bool, bool)],
    out: Option<&'static str>,
    invoke: Invoke,
) -> Call {
    Call {
        name,
        memory,
        texts: texts.to_vec(),
        out,
        invoke,
    }
}

const REQ: bool = false;
const OPT: bool = true;
const UTF8: bool = true;
const RAW: bool = false;

/// Every fallible function of the header, with a uniform way to call it.
pub(crate) fn calls() -> Vec<Call> {
    vec![
        call(
            "codeoid_memory_workspace",
            true,
            &[],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, _, o| unsafe { codeoid_memory_workspace(m, o) },
        ),
        call(
            "codeoid_memory_start_session",
            true,
            &[("options_json", OPT, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_start_session(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_memory_session",
            true,
            &[("session_id", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_session(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_memory_sessions",
            true,
            &[],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, _, o| unsafe { codeoid_memory_sessions(m, o) },
        ),
        call(
            "codeoid_memory_finish_session",
            true,
            &[("session_id", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_finish_session(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_memory_record_turn",
            true,
            &[("session_id", REQ, UTF8), ("turn_json", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_record_turn(m, t[0].0, t[0].1, t[1].0, t[1].1, o) },
        ),
        call(
            "codeoid_memory_record_turns",
            true,
            &[("session_id", REQ, UTF8), ("turns_json", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_record_turns(m, t[0].0, t[0].1, t[1].0, t[1].1, o) },
        ),
        call(
            "codeoid_memory_record_message",
            true,
            &[
                ("session_id", REQ, UTF8),
                ("model", OPT, UTF8),
                ("message_json", REQ, UTF8),
                ("usage_json", OPT, UTF8),
            ],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe {
                codeoid_memory_record_message(
                    m,
                    t[0].0,
                    t[0].1,
                    CODEOID_FORMAT_GEMINI,
                    t[1].0,
                    t[1].1,
                    t[2].0,
                    t[2].1,
                    t[3].0,
                    t[3].1,
                    o,
                )
            },
        ),
        call(
            "codeoid_memory_record_messages",
            true,
            &[
                ("session_id", REQ, UTF8),
                ("model", OPT, UTF8),
                ("messages_json", REQ, UTF8),
            ],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe {
                codeoid_memory_record_messages(
                    m,
                    t[0].0,
                    t[0].1,
                    CODEOID_FORMAT_GEMINI,
                    t[1].0,
                    t[1].1,
                    t[2].0,
                    t[2].1,
                    o,
                )
            },
        ),
        call(
            "codeoid_memory_turns",
            true,
            &[("session_id", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_turns(m, t[0].0, t[0].1, 0, u64::MAX, o) },
        ),
        call(
            "codeoid_memory_episode",
            true,
            &[("episode_id", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_episode(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_memory_episode_text",
            true,
            &[("current_session_id", OPT, UTF8), ("episode_id", REQ, UTF8)],
            Some("out_text"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_episode_text(m, t[0].0, t[0].1, t[1].0, t[1].1, o) },
        ),
        call(
            "codeoid_memory_timeline",
            true,
            &[("query_json", OPT, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_timeline(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_memory_timeline_text",
            true,
            &[("current_session_id", OPT, UTF8), ("query_json", OPT, UTF8)],
            Some("out_text"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_timeline_text(m, t[0].0, t[0].1, t[1].0, t[1].1, o) },
        ),
        call(
            "codeoid_memory_blob",
            true,
            &[("blob_id", REQ, UTF8)],
            Some("out_bytes"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_blob(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_memory_rotation_decision",
            true,
            &[("session_id", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_rotation_decision(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_memory_rotate",
            true,
            &[("session_id", REQ, UTF8), ("backing_context_id", OPT, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_rotate(m, t[0].0, t[0].1, t[1].0, t[1].1, o) },
        ),
        call(
            "codeoid_memory_take_seed",
            true,
            &[("session_id", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_take_seed(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_memory_set_context_window",
            true,
            &[("session_id", REQ, UTF8)],
            None,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, _| unsafe { codeoid_memory_set_context_window(m, t[0].0, t[0].1, 100_000) },
        ),
        call(
            "codeoid_memory_workspace_index",
            true,
            &[("session_id", OPT, UTF8)],
            Some("out_text"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_workspace_index(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_memory_compress",
            true,
            &[("command", REQ, UTF8), ("stdout_bytes", REQ, RAW)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_compress(m, t[0].0, t[0].1, t[1].0, t[1].1, o) },
        ),
        call(
            "codeoid_memory_run",
            true,
            &[("session_id", REQ, UTF8), ("command", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_run(m, t[0].0, t[0].1, t[1].0, t[1].1, o) },
        ),
        call(
            "codeoid_memory_run_with_timeout",
            true,
            &[("session_id", REQ, UTF8), ("command", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe {
                codeoid_memory_run_with_timeout(m, t[0].0, t[0].1, t[1].0, t[1].1, 5.0, o)
            },
        ),
        call(
            "codeoid_memory_run_cancellable",
            true,
            &[("session_id", REQ, UTF8), ("command", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call; the
            // timeout and the flag are optional.
            |m, t, o| unsafe {
                codeoid_memory_run_cancellable(
                    m,
                    t[0].0,
                    t[0].1,
                    t[1].0,
                    t[1].1,
                    std::ptr::null(),
                    std::ptr::null(),
                    o,
                )
            },
        ),
        call(
            "codeoid_memory_fork",
            true,
            &[
                ("session_id", REQ, UTF8),
                ("model", OPT, UTF8),
                ("name", REQ, UTF8),
                ("options_json", OPT, UTF8),
            ],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe {
                codeoid_memory_fork(
                    m,
                    t[0].0,
                    t[0].1,
                    -1,
                    CODEOID_FORMAT_GEMINI,
                    t[1].0,
                    t[1].1,
                    t[2].0,
                    t[2].1,
                    t[3].0,
                    t[3].1,
                    o,
                )
            },
        ),
        call(
            "codeoid_memory_import",
            true,
            &[("path", REQ, UTF8), ("options_json", OPT, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_import(m, t[0].0, t[0].1, t[1].0, t[1].1, o) },
        ),
        call(
            "codeoid_memory_import_cancellable",
            true,
            &[("path", REQ, UTF8), ("options_json", OPT, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call; the flag
            // is optional.
            |m, t, o| unsafe {
                codeoid_memory_import_cancellable(
                    m,
                    t[0].0,
                    t[0].1,
                    t[1].0,
                    t[1].1,
                    std::ptr::null(),
                    o,
                )
            },
        ),
        call(
            "codeoid_memory_recall",
            true,
            &[
                ("current_session_id", OPT, UTF8),
                ("query", REQ, UTF8),
                ("options_json", OPT, UTF8),
            ],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe {
                codeoid_memory_recall(m, t[0].0, t[0].1, t[1].0, t[1].1, t[2].0, t[2].1, o)
            },
        ),
        call(
            "codeoid_memory_recall_file",
            true,
            &[("path", REQ, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_recall_file(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_memory_flush",
            true,
            &[],
            None,
            // SAFETY: live handle and a writable flag (`out_flushed` is tested on its own).
            |m, _, _| unsafe { codeoid_memory_flush(m, 0, &mut false) },
        ),
        call(
            "codeoid_memory_embedding_status",
            true,
            &[],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, _, o| unsafe { codeoid_memory_embedding_status(m, o) },
        ),
        call(
            "codeoid_memory_warnings",
            true,
            &[],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, _, o| unsafe { codeoid_memory_warnings(m, o) },
        ),
        call(
            "codeoid_memory_call_tool",
            true,
            &[
                ("current_session_id", OPT, UTF8),
                ("name", REQ, UTF8),
                ("arguments_json", OPT, UTF8),
            ],
            Some("out_text"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call, and a
            // writable flag (`out_is_error` is tested on its own).
            |m, t, o| unsafe {
                codeoid_memory_call_tool(
                    m, t[0].0, t[0].1, t[1].0, t[1].1, t[2].0, t[2].1, o, &mut false,
                )
            },
        ),
        call(
            "codeoid_memory_tool_schemas",
            true,
            &[("prefix", OPT, UTF8)],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |m, t, o| unsafe { codeoid_memory_tool_schemas(m, t[0].0, t[0].1, o) },
        ),
        call(
            "codeoid_translate_declare_tools",
            false,
            &[("tools_json", REQ, UTF8), ("options_json", OPT, UTF8)],
            Some("out_json"),
            // SAFETY: valid (ptr, len) texts and out-structs for the call.
            |_, t, o| unsafe {
                codeoid_translate_declare_tools(
                    CODEOID_FORMAT_OPENAI_RESPONSES,
                    t[0].0,
                    t[0].1,
                    t[1].0,
                    t[1].1,
                    o,
                )
            },
        ),
        call(
            "codeoid_translate_to_messages",
            false,
            &[
                ("model", OPT, UTF8),
                ("turns_json", REQ, UTF8),
                ("options_json", OPT, UTF8),
            ],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |_, t, o| unsafe {
                codeoid_translate_to_messages(
                    CODEOID_FORMAT_ANTHROPIC,
                    t[0].0,
                    t[0].1,
                    t[1].0,
                    t[1].1,
                    t[2].0,
                    t[2].1,
                    o,
                )
            },
        ),
        call(
            "codeoid_translate_from_messages",
            false,
            &[
                ("model", OPT, UTF8),
                ("messages_json", REQ, UTF8),
                ("options_json", OPT, UTF8),
            ],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |_, t, o| unsafe {
                codeoid_translate_from_messages(
                    CODEOID_FORMAT_GEMINI,
                    t[0].0,
                    t[0].1,
                    t[1].0,
                    t[1].1,
                    t[2].0,
                    t[2].1,
                    o,
                )
            },
        ),
        call(
            "codeoid_translate_to_request",
            false,
            &[
                ("model", OPT, UTF8),
                ("request_json", REQ, UTF8),
                ("options_json", OPT, UTF8),
            ],
            Some("out_json"),
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            |_, t, o| unsafe {
                codeoid_translate_to_request(
                    CODEOID_FORMAT_OPENAI_CHAT,
                    t[0].0,
                    t[0].1,
                    t[1].0,
                    t[1].1,
                    t[2].0,
                    t[2].1,
                    o,
                )
            },
        ),
    ]
}

/// Functions that do not fit [`calls`]: constructors, destructors and accessors, each tested on
/// its own below.
pub(crate) const SPECIAL: [&str; 14] = [
    "codeoid_abi_version",
    "codeoid_version",
    "codeoid_error_code",
    "codeoid_error_message",
    "codeoid_error_code_name",
    "codeoid_error_free",
    "codeoid_string_free",
    "codeoid_memory_open",
    "codeoid_memory_free",
    "codeoid_cancel_new",
    "codeoid_cancel_request",
    "codeoid_cancel_requested",
    "codeoid_cancel_reset",
    "codeoid_cancel_free",
];

/// The function names declared in the committed header.
pub(crate) fn header_functions() -> BTreeSet<String> {
    let header = include_str!("../../../include/codeoid.h");
    header
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.starts_with('*'))
        .filter_map(|l| {
            // `struct codeoid_error *codeoid_memory_blob(...`: the name is the last word before
            // the parenthesis.
            let before = &l[..l.find('(')?];
            let name = before.rsplit([' ', '*']).next()?;
            name.starts_with("codeoid_").then(|| name.to_string())
        })
        .collect()
}

#[test]
fn every_header_function_is_covered_by_these_tests() {
    let mut covered: BTreeSet<String> = calls().iter().map(|c| c.name.to_string()).collect();
    covered.extend(SPECIAL.iter().map(|s| s.to_string()));
    let declared = header_functions();
    assert!(declared.len() >= 30, "header parse found {declared:?}");
    assert_eq!(
        declared, covered,
        "header functions vs. functions under test"
    );
}

/// Valid arguments for a call's texts (their content does not matter for argument checks).
fn valid_texts(call: &Call) -> Vec<String> {
    call.texts
        .iter()
        .map(|(name, _, _)| match *name {
            "options_json" | "query_json" | "arguments_json" | "message_json" => "{}".to_string(),
            "turn_json" => r#"{"role":"user","parts":[{"type":"text","text":"hi"}]}"#.to_string(),
            "turns_json" | "messages_json" | "tools_json" => "[]".to_string(),
            "request_json" => r#"{"turns":[]}"#.to_string(),
            _ => "x".to_string(),
        })
        .collect()
}

#[test]
fn every_null_pointer_argument_is_reported_by_name() {
    let fx = Fixture::new();
    for call in calls() {
        let texts = valid_texts(&call);
        let args: Vec<Text> = texts.iter().map(|t| c(t)).collect();
        let mut out = Out::new();
        if call.memory {
            // SAFETY: NULL handle, valid texts and out.
            let err = check(unsafe { (call.invoke)(std::ptr::null(), &args, out.ptr()) });
            assert_null_argument(err, call.name, "memory");
        }
        if let Some(out_name) = call.out {
            // SAFETY: valid handle and texts, NULL out.
            let err = check(unsafe { (call.invoke)(fx.memory, &args, std::ptr::null_mut()) });
            assert_null_argument(err, call.name, out_name);
        }
        for (i, (name, optional, _)) in call.texts.iter().enumerate() {
            let mut args = args.clone();
            args[i] = (std::ptr::null(), args[i].1);
            let mut out = Out::new();
            // SAFETY: valid handle and out, one NULL text.
            let err = check(unsafe { (call.invoke)(fx.memory, &args, out.ptr()) });
            if *optional {
                if let Err(e) = err {
                    assert_ne!(
                        e.code, CODEOID_ERROR_NULL_ARGUMENT,
                        "{}: optional {name}",
                        call.name
                    );
                }
            } else {
                assert_null_argument(err, call.name, name);
                assert!(out.0.ptr.is_null(), "{}: out written on failure", call.name);
            }
        }
        assert!(out.0.ptr.is_null(), "{}: out written on failure", call.name);
    }
}

fn assert_null_argument(err: Result<(), CError>, function: &str, argument: &str) {
    let err = err.expect_err(&format!("{function} accepted NULL {argument}"));
    assert_eq!(
        err.code, CODEOID_ERROR_NULL_ARGUMENT,
        "{function}/{argument}: {err:?}"
    );
    assert!(
        err.message.contains(&format!("`{argument}`")),
        "{function}: message does not name {argument}: {}",
        err.message
    );
}

#[test]
fn every_text_argument_rejects_invalid_utf8_by_name() {
    let fx = Fixture::new();
    let bad: &[u8] = b"ses_\xff\xfe";
    for call in calls() {
        let texts = valid_texts(&call);
        for (i, (name, _, utf8)) in call.texts.iter().enumerate() {
            let mut args: Vec<Text> = texts.iter().map(|t| c(t)).collect();
            args[i] = (bad.as_ptr().cast(), bad.len());
            let mut out = Out::new();
            // SAFETY: valid handle and out; one text of invalid UTF-8.
            let err = check(unsafe { (call.invoke)(fx.memory, &args, out.ptr()) });
            if *utf8 {
                let err = err.expect_err(&format!("{} accepted bad UTF-8 {name}", call.name));
                assert_eq!(
                    err.code, CODEOID_ERROR_INVALID_UTF8,
                    "{}/{name}: {err:?}",
                    call.name
                );
                assert!(
                    err.message.contains(&format!("`{name}`")),
                    "{}",
                    err.message
                );
                assert!(err.message.contains("offset 4"), "{}", err.message);
                assert!(out.0.ptr.is_null());
            } else if let Err(e) = err {
                assert_ne!(
                    e.code, CODEOID_ERROR_INVALID_UTF8,
                    "{}: raw {name}",
                    call.name
                );
            }
        }
    }
}

#[test]
fn a_null_out_parameter_fails_before_anything_is_written() {
    let fx = Fixture::new();
    let session = fx.session("ses_nullout");
    let turn = r#"{"id":"t1","role":"user","parts":[{"type":"text","text":"hello"}]}"#;
    let (sp, sl) = c(&session);
    let (tp, tl) = c(turn);
    // SAFETY: valid handle and texts, NULL out.
    let err = code(unsafe {
        codeoid_memory_record_turn(fx.memory, sp, sl, tp, tl, std::ptr::null_mut())
    });
    assert_eq!(err, CODEOID_ERROR_NULL_ARGUMENT);
    let mut out = Out::new();
    // SAFETY: valid arguments.
    check(unsafe { codeoid_memory_session(fx.memory, sp, sl, out.ptr()) }).unwrap();
    assert_eq!(
        out.json()["turn_count"],
        0,
        "the turn was recorded despite the error"
    );
}

#[test]
fn flag_out_parameters_are_required_and_named() {
    let fx = Fixture::new();
    // SAFETY: valid handle, NULL flag.
    let err = check(unsafe { codeoid_memory_flush(fx.memory, 0, std::ptr::null_mut()) });
    assert_null_argument(err, "codeoid_memory_flush", "out_flushed");
    let (np, nl) = c("timeline");
    let mut out = Out::new();
    // SAFETY: valid handle, texts and out-string, NULL flag.
    let err = check(unsafe {
        codeoid_memory_call_tool(
            fx.memory,
            std::ptr::null(),
            0,
            np,
            nl,
            std::ptr::null(),
            0,
            out.ptr(),
            std::ptr::null_mut(),
        )
    });
    assert_null_argument(err, "codeoid_memory_call_tool", "out_is_error");
    assert!(out.0.ptr.is_null(), "out_text written on failure");
    // Written only on success: a failing call leaves the flag as the caller set it.
    let mut flushed = true;
    // SAFETY: NULL handle (reported), writable flag.
    let err = check(unsafe { codeoid_memory_flush(std::ptr::null(), -1, &mut flushed) });
    assert_null_argument(err, "codeoid_memory_flush", "memory");
    assert!(flushed);
}

#[test]
fn zero_length_text_with_a_pointer_is_the_empty_string() {
    let fx = Fixture::new();
    let empty = "";
    let nonnull: *const c_char = c"ignored".as_ptr();
    let mut out = Out::new();
    // An empty session id is a real, checked value, never a NULL-argument error.
    // SAFETY: a valid pointer with length 0.
    let err =
        check(unsafe { codeoid_memory_session(fx.memory, nonnull, 0, out.ptr()) }).unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{err:?}");
    assert!(
        err.message.contains("session id is empty"),
        "{}",
        err.message
    );
    // An empty options text is not JSON.
    // SAFETY: as above.
    let err = check(unsafe { codeoid_memory_start_session(fx.memory, nonnull, 0, out.ptr()) })
        .unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT);
    assert!(err.message.contains("`options_json`"), "{}", err.message);
    // Empty stdout compresses to nothing: the JSON null.
    let (cp, cl) = c("cargo test");
    // SAFETY: as above.
    check(unsafe { codeoid_memory_compress(fx.memory, cp, cl, nonnull, 0, out.ptr()) }).unwrap();
    assert_eq!(out.text(), "null");
    assert!(empty.is_empty());
}

#[test]
fn a_length_no_buffer_can_have_is_invalid_input() {
    let fx = Fixture::new();
    let mut out = Out::new();
    let huge = usize::MAX;
    // SAFETY: the length check runs before the pointer is read.
    let err = check(unsafe { codeoid_memory_session(fx.memory, c"x".as_ptr(), huge, out.ptr()) })
        .unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT);
    assert!(err.message.contains("`session_id`"), "{}", err.message);
}

#[test]
fn format_integers_are_checked() {
    let (tp, tl) = c("[]");
    for bad in [0, 5, 99, u32::MAX] {
        let mut out = Out::new();
        // SAFETY: valid texts and out.
        let err = check(unsafe {
            codeoid_translate_to_messages(
                bad,
                std::ptr::null(),
                0,
                tp,
                tl,
                std::ptr::null(),
                0,
                out.ptr(),
            )
        })
        .unwrap_err();
        assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{bad}");
        assert!(
            err.message.contains(&format!("is {bad}, not a format")),
            "{}",
            err.message
        );
        // SAFETY: as above.
        let e2 = code(unsafe {
            codeoid_translate_from_messages(
                bad,
                std::ptr::null(),
                0,
                tp,
                tl,
                std::ptr::null(),
                0,
                out.ptr(),
            )
        });
        assert_eq!(e2, CODEOID_ERROR_INVALID_INPUT);
        let (rp, rl) = c(r#"{"turns":[]}"#);
        // SAFETY: as above.
        let e3 = code(unsafe {
            codeoid_translate_to_request(
                bad,
                std::ptr::null(),
                0,
                rp,
                rl,
                std::ptr::null(),
                0,
                out.ptr(),
            )
        });
        assert_eq!(e3, CODEOID_ERROR_INVALID_INPUT);
    }
}

/// Opens a memory with `config`, expecting failure; returns the error.
fn open_error(config: &str) -> CError {
    let (p, l) = c(config);
    let mut memory: *mut codeoid_memory = std::ptr::null_mut();
    // SAFETY: valid text and out.
    let err = check(unsafe { codeoid_memory_open(p, l, &mut memory) }).unwrap_err();
    assert!(memory.is_null(), "out written on failure");
    err
}

#[test]
fn config_json_of_the_wrong_shape_is_invalid_input() {
    for (config, mention) in [
        ("[]", "config_json"),
        ("not json", "config_json"),
        (r#"{"db_path": 3}"#, "config_json"),
        (r#"{"db_pth": "/tmp/x.db"}"#, "db_pth"),
        (r#"{"rotation": 5}"#, "rotation"),
        (r#"{"rotation": {"auto_rotat": true}}"#, "auto_rotat"),
        (r#"{"rotation": {"soft_threshold": "high"}}"#, "rotation"),
        (r#"{"index": {"budget_chars": -1}}"#, "index"),
        (r#"{"store": {"busy_timeout": 5}}"#, "busy_timeout"),
        (r#"{"hash_live_read": false}"#, "hash_live_read"),
        (r#"{"hash_live_reads": "no"}"#, "config_json"),
    ] {
        let err = open_error(config);
        assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{config}: {err:?}");
        assert!(err.message.contains(mention), "{config}: {}", err.message);
    }
    // A setting the core validates (not just parses).
    let err =
        open_error(r#"{"db_path": "/nonexistent/x.db", "rotation": {"soft_threshold": 2.0}}"#);
    assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{err:?}");
    // Beyond what SQLite takes (i32::MAX ms): an error naming it, not a panic.
    let err =
        open_error(r#"{"db_path": "/nonexistent/x.db", "store": {"busy_timeout_ms": 3000000000}}"#);
    assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{err:?}");
    assert!(err.message.contains("busy_timeout"), "{}", err.message);
}

#[test]
fn a_missing_workspace_directory_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let config = serde_json::json!({
        "db_path": dir.path().join("codeoid.db"),
        "workspace_dir": dir.path().join("no-such-dir"),
        "embeddings": {"enabled": false},
    })
    .to_string();
    let err = open_error(&config);
    assert_eq!(err.code, CODEOID_ERROR_NOT_FOUND, "{err:?}");
    assert!(err.message.contains("no-such-dir"), "{}", err.message);
    // The header lists every code the function can return.
    let header = include_str!("../../../include/codeoid.h");
    let open = header
        .find("codeoid_memory_open(")
        .expect("codeoid_memory_open in the header");
    let doc = &header[header[..open].rfind("/**").expect("its doc comment")..open];
    assert!(doc.contains("CODEOID_ERROR_NOT_FOUND"), "{doc}");
}

#[test]
fn a_file_that_is_not_a_store_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-store.db");
    std::fs::write(&path, vec![0x42u8; 8192]).unwrap();
    let config = serde_json::json!({"db_path": path, "workspace_dir": dir.path()}).to_string();
    let err = open_error(&config);
    assert_eq!(err.code, CODEOID_ERROR_CORRUPT, "{err:?}");
}

#[test]
fn json_arguments_of_the_wrong_shape_are_invalid_input() {
    let fx = Fixture::new();
    let session = fx.session("ses_shapes");
    let (sp, sl) = c(&session);
    let mut out = Out::new();
    let cases: Vec<(&str, Box<TextCall<'_>>)> = vec![
        (
            r#"{"id": 5}"#,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe { codeoid_memory_start_session(fx.memory, p, l, o) }),
        ),
        (
            r#"{"role": "robot", "parts": []}"#,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe { codeoid_memory_record_turn(fx.memory, sp, sl, p, l, o) }),
        ),
        (
            "[]",
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe { codeoid_memory_record_turn(fx.memory, sp, sl, p, l, o) }),
        ),
        (
            r#"{"role": "user", "parts": [{"type": "tool_call", "id": "x", "name": "Read", "input": {}}]}"#,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe { codeoid_memory_record_turn(fx.memory, sp, sl, p, l, o) }),
        ),
        (
            "{}",
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe {
                codeoid_memory_record_turns(fx.memory, sp, sl, p, l, o)
            }),
        ),
        (
            r#"[{"role": "user", "parts": []}, {"role": 3}]"#,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe {
                codeoid_memory_record_turns(fx.memory, sp, sl, p, l, o)
            }),
        ),
        (
            r#"{"limit": 0}"#,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe { codeoid_memory_timeline(fx.memory, p, l, o) }),
        ),
        (
            r#"{"limit": "ten"}"#,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe { codeoid_memory_timeline(fx.memory, p, l, o) }),
        ),
        (
            r#"{"page": 2}"#,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe {
                codeoid_memory_timeline_text(fx.memory, std::ptr::null(), 0, p, l, o)
            }),
        ),
        (
            r#"{"role": "user"}"#,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe {
                codeoid_translate_to_messages(
                    CODEOID_FORMAT_GEMINI,
                    std::ptr::null(),
                    0,
                    p,
                    l,
                    std::ptr::null(),
                    0,
                    o,
                )
            }),
        ),
        (
            r#"{"contents": []}"#,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe {
                codeoid_translate_from_messages(
                    CODEOID_FORMAT_GEMINI,
                    std::ptr::null(),
                    0,
                    p,
                    l,
                    std::ptr::null(),
                    0,
                    o,
                )
            }),
        ),
        (
            r#"{"turns": {}}"#,
            // SAFETY: live handle, valid (ptr, len) texts and out-structs for the call.
            Box::new(|(p, l), o| unsafe {
                codeoid_translate_to_request(
                    CODEOID_FORMAT_ANTHROPIC,
                    std::ptr::null(),
                    0,
                    p,
                    l,
                    std::ptr::null(),
                    0,
                    o,
                )
            }),
        ),
    ];
    for (json, invoke) in &cases {
        let err = check(invoke(c(json), out.ptr())).expect_err(json);
        assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{json}: {err:?}");
        assert!(out.0.ptr.is_null());
    }
    // Translation options: unknown keys are named.
    let (tp, tl) = c("[]");
    let (op, ol) = c(r#"{"strictly": true}"#);
    // SAFETY: valid texts and out.
    let err = check(unsafe {
        codeoid_translate_to_messages(
            CODEOID_FORMAT_ANTHROPIC,
            std::ptr::null(),
            0,
            tp,
            tl,
            op,
            ol,
            out.ptr(),
        )
    })
    .unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT);
    assert!(err.message.contains("strictly"), "{}", err.message);
    // Nothing of the rejected turns was stored.
    // SAFETY: valid arguments.
    check(unsafe { codeoid_memory_session(fx.memory, sp, sl, out.ptr()) }).unwrap();
    assert_eq!(out.json()["turn_count"], 0);
}

/// `codeoid_translate_to_request` with `request`, the body's JSON or the error.
fn to_request(request: &str) -> Result<serde_json::Value, CError> {
    let (rp, rl) = c(request);
    let mut out = Out::new();
    // SAFETY: valid texts and out-struct.
    check(unsafe {
        codeoid_translate_to_request(
            CODEOID_FORMAT_ANTHROPIC,
            std::ptr::null(),
            0,
            rp,
            rl,
            std::ptr::null(),
            0,
            out.ptr(),
        )
    })?;
    Ok(out.json())
}

/// `codeoid_translate_declare_tools` with `tools` for Anthropic, the tools or the error.
fn declare(tools: &str) -> Result<serde_json::Value, CError> {
    let (tp, tl) = c(tools);
    let mut out = Out::new();
    // SAFETY: valid texts and out-struct.
    check(unsafe {
        codeoid_translate_declare_tools(
            CODEOID_FORMAT_ANTHROPIC,
            tp,
            tl,
            std::ptr::null(),
            0,
            out.ptr(),
        )
    })?;
    Ok(out.json())
}

#[test]
fn misspelled_request_and_tool_keys_are_invalid_input() {
    let turns = r#"[{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]"#;
    let schema = r#"{"type": "object", "properties": {}}"#;
    // Spelled right, every key arrives.
    let body = to_request(&format!(
        r#"{{"turns": {turns}, "system": "be brief", "tools": [{{"name": "look", "description": "looks", "input_schema": {schema}}}]}}"#
    ))
    .unwrap();
    assert_eq!(body["body"]["system"], "be brief", "{body}");
    assert_eq!(body["body"]["tools"][0]["description"], "looks", "{body}");
    let tools = declare(&format!(
        r#"[{{"name": "look", "description": "looks", "input_schema": {schema}}}]"#
    ))
    .unwrap();
    assert_eq!(tools["tools"][0]["description"], "looks", "{tools}");
    // Misspelled, the key is named instead of silently dropped.
    for (request, key) in [
        (
            format!(r#"{{"turns": {turns}, "sytem": "be brief"}}"#),
            "sytem",
        ),
        (format!(r#"{{"turn": {turns}}}"#), "turn"),
        (
            format!(
                r#"{{"turns": {turns}, "tools": [{{"name": "look", "descripton": "looks", "input_schema": {schema}}}]}}"#
            ),
            "descripton",
        ),
    ] {
        let err = to_request(&request).expect_err(&request);
        assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{request}: {err:?}");
        assert!(err.message.contains(key), "{request}: {}", err.message);
    }
    for (tools, key) in [
        (
            format!(r#"[{{"name": "look", "descripton": "looks", "input_schema": {schema}}}]"#),
            "descripton",
        ),
        (
            format!(r#"[{{"name": "look", "input_shema": {schema}}}]"#),
            "input_shema",
        ),
    ] {
        let err = declare(&tools).expect_err(&tools);
        assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{tools}: {err:?}");
        assert!(err.message.contains(key), "{tools}: {}", err.message);
    }
}

#[test]
fn strings_may_be_freed_twice_and_null_is_a_no_op() {
    let fx = Fixture::new();
    let mut out = codeoid_string::empty();
    // SAFETY: valid handle and out.
    check(unsafe { codeoid_memory_sessions(fx.memory, &mut out) }).unwrap();
    assert!(!out.ptr.is_null());
    assert_eq!(out.to_str(), Some("[]"));
    // SAFETY: ptr[len] is inside the buffer.
    assert_eq!(unsafe { *out.ptr.add(out.len) }, 0, "NUL-terminated");
    // SAFETY: a filled struct, then the same struct again, then NULL, then an empty struct.
    unsafe {
        codeoid_string_free(&mut out);
        assert!(out.ptr.is_null() && out.len == 0);
        codeoid_string_free(&mut out);
        codeoid_string_free(std::ptr::null_mut());
        let mut empty = codeoid_string::empty();
        codeoid_string_free(&mut empty);
    }
}

#[test]
fn null_handles_and_errors_are_harmless() {
    // SAFETY: NULL is documented as accepted by each of these.
    unsafe {
        codeoid_memory_free(std::ptr::null_mut());
        codeoid_error_free(std::ptr::null_mut());
        assert_eq!(codeoid_error_code(std::ptr::null()), 0);
        assert_eq!(
            CStr::from_ptr(codeoid_error_message(std::ptr::null())).to_bytes(),
            b""
        );
        let err = codeoid_memory_open(std::ptr::null(), 0, std::ptr::null_mut());
        assert_eq!(code(err), CODEOID_ERROR_NULL_ARGUMENT);
    }
}

#[test]
fn every_core_kind_has_its_own_c_code_and_name() {
    let header_codes = [
        (ErrorKind::InvalidInput, CODEOID_ERROR_INVALID_INPUT),
        (ErrorKind::NotFound, CODEOID_ERROR_NOT_FOUND),
        (ErrorKind::AlreadyExists, CODEOID_ERROR_ALREADY_EXISTS),
        (ErrorKind::Database, CODEOID_ERROR_DATABASE),
        (ErrorKind::Busy, CODEOID_ERROR_BUSY),
        (ErrorKind::Corrupt, CODEOID_ERROR_CORRUPT),
        (ErrorKind::SchemaTooNew, CODEOID_ERROR_SCHEMA_TOO_NEW),
        (ErrorKind::Io, CODEOID_ERROR_IO),
        (ErrorKind::ModelUnavailable, CODEOID_ERROR_MODEL_UNAVAILABLE),
        (ErrorKind::Model, CODEOID_ERROR_MODEL),
        (ErrorKind::Translation, CODEOID_ERROR_TRANSLATION),
        (ErrorKind::Import, CODEOID_ERROR_IMPORT),
        (ErrorKind::RotationRefused, CODEOID_ERROR_ROTATION_REFUSED),
        (ErrorKind::Internal, CODEOID_ERROR_INTERNAL),
    ];
    assert_eq!(
        header_codes.len(),
        ErrorKind::ALL.len(),
        "a core kind has no C macro"
    );
    let mut seen = BTreeSet::new();
    for kind in ErrorKind::ALL {
        let (_, c_code) = header_codes
            .iter()
            .find(|(k, _)| *k == kind)
            .expect("listed");
        assert_eq!(*c_code, kind.code(), "{kind}");
        assert!(*c_code < 1000, "core codes stay below the FFI range");
        // SAFETY: a static string or NULL.
        let name = unsafe { CStr::from_ptr(codeoid_error_code_name(*c_code)) };
        assert_eq!(name.to_str().unwrap(), kind.name());
        assert!(seen.insert(*c_code));
    }
    for (ffi_code, ffi_name) in FFI_CODES {
        assert!(
            ffi_code >= 1000 && seen.insert(ffi_code),
            "{ffi_code} reused"
        );
        // SAFETY: a static string.
        let name = unsafe { CStr::from_ptr(codeoid_error_code_name(ffi_code)) };
        assert_eq!(name.to_str().unwrap(), ffi_name);
    }
    for unknown in [0, 15, 999, 1004, u32::MAX] {
        assert!(codeoid_error_code_name(unknown).is_null(), "{unknown}");
    }
}

#[test]
fn the_error_table_in_the_docs_lists_every_code() {
    let doc = include_str!("../../../docs/errors.md");
    for kind in ErrorKind::ALL {
        let row = format!("| {} | `{}` |", kind.code(), kind.name());
        assert!(doc.contains(&row), "docs/errors.md lacks the row {row}");
    }
    for (ffi_code, name) in FFI_CODES {
        let row = format!("| {ffi_code} | `{name}` |");
        assert!(doc.contains(&row), "docs/errors.md lacks the row {row}");
    }
}

#[test]
fn core_errors_keep_their_kind_and_full_message() {
    let fx = Fixture::new();
    let mut out = Out::new();
    let (p, l) = c("ep_0123456789abcdef");
    // SAFETY: valid arguments.
    let err = check(unsafe { codeoid_memory_episode(fx.memory, p, l, out.ptr()) }).unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_NOT_FOUND);
    assert!(
        err.message.contains("ep_0123456789abcdef"),
        "{}",
        err.message
    );
    // A NUL inside user text quoted in a message is spelled out, not a truncation.
    let (p, l) = c("ses_a\0b");
    // SAFETY: valid arguments (a NUL is valid UTF-8).
    let err = check(unsafe { codeoid_memory_session(fx.memory, p, l, out.ptr()) }).unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_NOT_FOUND);
    assert!(err.message.contains("ses_a\\0b"), "{}", err.message);
}

#[test]
fn another_workspace_is_not_found_through_the_same_file() {
    let fx = Fixture::new();
    let session = fx.session("ses_ws_a");
    let outcome = fx.record(&session, &super::exchange(1, 1000)[0]);
    assert_eq!(outcome["recorded"]["seq"], 0);
    let other_dir = fx.dir.path().join("other");
    std::fs::create_dir_all(&other_dir).unwrap();
    let config = serde_json::json!({"db_path": fx.dir.path().join("codeoid.db"), "workspace_dir": other_dir}).to_string();
    let (p, l) = c(&config);
    let mut other: *mut codeoid_memory = std::ptr::null_mut();
    // SAFETY: valid arguments.
    check(unsafe { codeoid_memory_open(p, l, &mut other) }).unwrap();
    let (sp, sl) = c(&session);
    let mut out = Out::new();
    // SAFETY: valid arguments; the handle is freed once below.
    unsafe {
        assert_eq!(
            code(codeoid_memory_session(other, sp, sl, out.ptr())),
            CODEOID_ERROR_NOT_FOUND
        );
        assert_eq!(
            code(codeoid_memory_rotation_decision(other, sp, sl, out.ptr())),
            CODEOID_ERROR_NOT_FOUND
        );
        codeoid_memory_free(other);
    }
}

#[test]
fn a_read_only_open_reads_the_store_and_refuses_writes_as_io() {
    let fx = Fixture::new();
    let session = fx.session("ses_read_only");
    fx.record(&session, &super::exchange(1, 1000)[0]);
    let config = serde_json::json!({
        "db_path": fx.dir.path().join("codeoid.db"),
        "workspace_dir": fx.dir.path().join("project"),
        "embeddings": {"enabled": false},
        "store": {"read_only": true},
    })
    .to_string();
    let (p, l) = c(&config);
    let mut reader: *mut codeoid_memory = std::ptr::null_mut();
    // SAFETY: valid arguments.
    check(unsafe { codeoid_memory_open(p, l, &mut reader) }).unwrap();
    let (sp, sl) = c(&session);
    let turn = super::exchange(2, 1000)[0].to_string();
    let (tp, tl) = c(&turn);
    let mut out = Out::new();
    // SAFETY: valid arguments; the handle is freed once below.
    unsafe {
        check(codeoid_memory_session(reader, sp, sl, out.ptr())).unwrap();
        assert_eq!(out.json()["id"], session.as_str());
        let err = check(crate::sessions::codeoid_memory_record_turn(
            reader,
            sp,
            sl,
            tp,
            tl,
            Out::new().ptr(),
        ))
        .unwrap_err();
        assert_eq!(err.code, CODEOID_ERROR_IO, "{err:?}");
        assert!(err.message.contains("opened read-only"), "{}", err.message);
        codeoid_memory_free(reader);
    }

    // A read-only open creates nothing.
    let missing = fx.dir.path().join("none.db");
    let err = open_error(
        &serde_json::json!({"db_path": missing, "store": {"read_only": true},
            "embeddings": {"enabled": false}})
        .to_string(),
    );
    assert_eq!(err.code, CODEOID_ERROR_NOT_FOUND, "{err:?}");
    assert!(!missing.exists());
}
