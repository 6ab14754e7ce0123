//! One `codeoid_memory` used from many threads at once: writers in their own sessions, readers
//! of the timeline and episodes, recall and the memory tools, the index and compression, all
//! through the C functions.
//! Errors are returned objects, so each thread sees its own.

use super::{Fixture, Out, c, check, exchange, record_on};
use crate::*;

#[test]
fn many_threads_share_one_handle() {
    let fx = Fixture::new();
    let memory = fx.handle();
    let threads = 8;
    let rounds = 5;
    let sessions: Vec<String> = (0..threads)
        .map(|t| fx.session(&format!("ses_thread_{t}")))
        .collect();
    std::thread::scope(|scope| {
        for (t, session) in sessions.iter().enumerate() {
            scope.spawn(move || {
                for round in 0..rounds {
                    let n = t * 100 + round;
                    for turn in exchange(n, 1_000) {
                        let outcome = record_on(memory, session, &turn);
                        for id in outcome["recorded"]["episode_ids"].as_array().unwrap() {
                            let id = id.as_str().unwrap();
                            let (ep, el) = c(id);
                            let mut out = Out::new();
                            // SAFETY: valid handle, text and out.
                            check(unsafe { codeoid_memory_episode(memory, ep, el, out.ptr()) })
                                .unwrap();
                            assert_eq!(out.json()["session_id"], session.as_str());
                        }
                    }
                    // Each thread's own error, with its own message.
                    let missing = format!("ep_missing_{t}_{round}");
                    let (mp, ml) = c(&missing);
                    let mut out = Out::new();
                    // SAFETY: valid arguments.
                    let err = check(unsafe { codeoid_memory_episode(memory, mp, ml, out.ptr()) })
                        .unwrap_err();
                    assert_eq!(err.code, CODEOID_ERROR_NOT_FOUND);
                    assert!(err.message.contains(&missing), "{}", err.message);
                    let (sp, sl) = c(session);
                    // SAFETY: valid arguments.
                    check(unsafe { codeoid_memory_workspace_index(memory, sp, sl, out.ptr()) })
                        .unwrap();
                }
            });
        }
        for _ in 0..2 {
            scope.spawn(move || {
                for _ in 0..20 {
                    let mut out = Out::new();
                    // SAFETY: valid arguments.
                    check(unsafe {
                        codeoid_memory_timeline(memory, std::ptr::null(), 0, out.ptr())
                    })
                    .unwrap();
                    let (qp, ql) = c("SCHEMA_VERSION");
                    let mut out = Out::new();
                    // SAFETY: valid arguments; NULL session and options are optional.
                    check(unsafe {
                        codeoid_memory_recall(
                            memory,
                            std::ptr::null(),
                            0,
                            qp,
                            ql,
                            std::ptr::null(),
                            0,
                            out.ptr(),
                        )
                    })
                    .unwrap();
                    let (np, nl) = c("recall");
                    let (ap, al) = c(r#"{"query": "migration"}"#);
                    let mut out = Out::new();
                    let mut is_error = true;
                    // SAFETY: valid arguments.
                    check(unsafe {
                        codeoid_memory_call_tool(
                            memory,
                            std::ptr::null(),
                            0,
                            np,
                            nl,
                            ap,
                            al,
                            out.ptr(),
                            &mut is_error,
                        )
                    })
                    .unwrap();
                    assert!(!is_error, "{}", out.text());
                    let (cp, cl) = c("git status");
                    let (op, ol) = c("On branch main\nnothing to commit\n");
                    let mut out = Out::new();
                    // SAFETY: valid arguments.
                    check(unsafe { codeoid_memory_compress(memory, cp, cl, op, ol, out.ptr()) })
                        .unwrap();
                }
            });
        }
    });
    let mut out = Out::new();
    // SAFETY: valid arguments.
    check(unsafe { codeoid_memory_sessions(fx.memory, out.ptr()) }).unwrap();
    let sessions = out.json();
    assert_eq!(sessions.as_array().unwrap().len(), threads);
    for s in sessions.as_array().unwrap() {
        assert_eq!(s["turn_count"], (rounds * 4) as u64, "{s}");
    }
}

/// The header promises that a handle may be used from any thread and that errors and strings may
/// be freed on another thread than the one that received them.
#[test]
fn handles_errors_and_strings_may_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<codeoid_memory>();
    send::<codeoid_error>();
    let err = {
        let (p, l) = c("ep_missing");
        let fx = Fixture::new();
        let mut out = Out::new();
        // SAFETY: valid handle, text and out-struct.
        let err = unsafe { codeoid_memory_episode(fx.memory, p, l, out.ptr()) };
        err as usize
    };
    // The error outlives its memory handle and is read and freed on another thread.
    let code = std::thread::spawn(move || check(err as *mut codeoid_error).unwrap_err().code)
        .join()
        .unwrap();
    assert_eq!(code, CODEOID_ERROR_NOT_FOUND);
}
