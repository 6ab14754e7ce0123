//! `codeoid_cancel`: a flag raised on another thread stops a running command (its output kept,
//! `interrupted` set) and an import between files (`stopped` set, the rest imported next time);
//! a flag raised before the call is `CODEOID_ERROR_CANCELLED` with nothing done.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Fixture, Out, c, check};
use crate::*;

/// A flag that frees itself.
struct Flag(*mut codeoid_cancel);

impl Flag {
    fn new() -> Flag {
        let flag = codeoid_cancel_new();
        assert!(!flag.is_null());
        Flag(flag)
    }

    fn raise(&self) {
        // SAFETY: a live flag.
        unsafe { codeoid_cancel_request(self.0) }
    }

    fn lower(&self) {
        // SAFETY: a live flag.
        unsafe { codeoid_cancel_reset(self.0) }
    }

    fn raised(&self) -> bool {
        // SAFETY: a live flag.
        unsafe { codeoid_cancel_requested(self.0) }
    }
}

// SAFETY: the flag is an atomic; codeoid_cancel_request is documented thread-safe.
unsafe impl Sync for Flag {}

impl Drop for Flag {
    fn drop(&mut self) {
        // SAFETY: a live flag, freed once.
        unsafe { codeoid_cancel_free(self.0) }
    }
}

/// `codeoid_memory_run_cancellable` of `command` in `session`.
fn run(
    fx: &Fixture,
    session: &str,
    command: &str,
    timeout: Option<f64>,
    flag: Option<&Flag>,
) -> Result<Value, super::CError> {
    let (sp, sl) = c(session);
    let (cp, cl) = c(command);
    let timeout = timeout
        .as_ref()
        .map_or(std::ptr::null(), std::ptr::from_ref);
    let flag = flag.map_or(std::ptr::null(), |f| f.0.cast_const());
    let mut out = Out::new();
    // SAFETY: live handle, valid (ptr, len) texts, a NULL or readable timeout, a NULL or live
    // flag, and an empty out-struct.
    check(unsafe {
        codeoid_memory_run_cancellable(fx.memory, sp, sl, cp, cl, timeout, flag, out.ptr())
    })?;
    Ok(out.json())
}

/// `codeoid_memory_import_cancellable` of `path`.
fn import(fx: &Fixture, path: &str, flag: Option<&Flag>) -> Result<Value, super::CError> {
    let (pp, pl) = c(path);
    let flag = flag.map_or(std::ptr::null(), |f| f.0.cast_const());
    let mut out = Out::new();
    // SAFETY: live handle, valid (ptr, len) text, no options, a NULL or live flag, and an empty
    // out-struct.
    check(unsafe {
        codeoid_memory_import_cancellable(fx.memory, pp, pl, std::ptr::null(), 0, flag, out.ptr())
    })?;
    Ok(out.json())
}

#[test]
fn a_flag_starts_lowered_stays_raised_until_reset_and_null_is_harmless() {
    let flag = Flag::new();
    assert!(!flag.raised());
    flag.raise();
    flag.raise();
    assert!(flag.raised());
    flag.lower();
    assert!(!flag.raised());
    // SAFETY: NULL is documented as a no-op for each.
    unsafe {
        codeoid_cancel_request(std::ptr::null());
        codeoid_cancel_reset(std::ptr::null());
        assert!(!codeoid_cancel_requested(std::ptr::null()));
        codeoid_cancel_free(std::ptr::null_mut());
    }
}

#[test]
fn a_flag_raised_from_another_thread_interrupts_a_running_command_and_keeps_its_output() {
    let fx = Fixture::new();
    let session = fx.session("ses_cancel_run");
    let flag = Flag::new();
    let started = Instant::now();
    let run = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(400));
            flag.raise();
        });
        run(&fx, &session, "echo started; sleep 30", None, Some(&flag)).expect("run")
    });
    assert!(started.elapsed() < Duration::from_secs(10), "{run}");
    assert_eq!(run["interrupted"], true, "{run}");
    assert_eq!(run["timed_out"], false, "{run}");
    let shown = run["stdout"].as_str().unwrap();
    assert!(shown.starts_with("started\n"), "{run}");
    assert!(shown.contains("was interrupted"), "{run}");
    // What it printed is stored.
    let id = run["episode_id"].as_str().expect("stored");
    let (ip, il) = c(id);
    let mut out = Out::new();
    // SAFETY: live handle, valid text and out-struct.
    check(unsafe { codeoid_memory_episode(fx.memory, ip, il, out.ptr()) }).unwrap();
    assert!(
        out.json()["content"].as_str().unwrap().contains("started"),
        "{}",
        out.text()
    );
}

#[test]
fn a_flag_raised_before_the_call_runs_nothing_and_a_lowered_one_changes_nothing() {
    let fx = Fixture::new();
    let session = fx.session("ses_cancel_before");
    let marker = fx.dir.path().join("ran");
    let command = format!("touch '{}'; echo done", marker.display());

    let raised = Flag::new();
    raised.raise();
    let err = run(&fx, &session, &command, None, Some(&raised)).unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_CANCELLED, "{err:?}");
    assert!(err.message.contains("already raised"), "{}", err.message);
    assert!(!marker.exists(), "the command ran");

    // Lowered again, the same flag lets the next call run.
    raised.lower();
    let done = run(&fx, &session, &command, None, Some(&raised)).expect("run");
    assert_eq!(
        (&done["stdout"], &done["interrupted"]),
        (&Value::from("done\n"), &Value::from(false)),
        "{done}"
    );
    assert!(marker.exists());
    // No flag at all is the plain run.
    let plain = run(&fx, &session, "echo plain", None, None).expect("run");
    assert_eq!(plain["stdout"], "plain\n", "{plain}");
}

#[test]
fn the_timeout_pointer_is_optional_and_checked() {
    let fx = Fixture::with_config(|config| config["run_timeout_secs"] = Value::from(0.3));
    let session = fx.session("ses_cancel_timeout");
    let flag = Flag::new();
    // NULL keeps the memory's 0.3 s.
    let run_default = run(&fx, &session, "sleep 30", None, Some(&flag)).expect("run");
    assert_eq!(run_default["timed_out"], true, "{run_default}");
    // 0 is none: the command ends on its own after the memory's timeout would have passed.
    let none = run(&fx, &session, "sleep 0.5; echo out", Some(0.0), Some(&flag)).expect("run");
    assert_eq!(
        (&none["timed_out"], &none["stdout"]),
        (&Value::from(false), &Value::from("out\n")),
        "{none}"
    );
    let err = run(&fx, &session, "true", Some(-1.0), Some(&flag)).unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_INVALID_INPUT, "{err:?}");
    assert!(
        err.message.contains("timeout_secs is -1"),
        "{}",
        err.message
    );
}

/// A folder of `n` one-session Claude Code logs.
fn logs(fx: &Fixture, n: usize) -> String {
    let dir = fx.dir.path().join("logs");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..n {
        let line = format!(
            r#"{{"type":"user","uuid":"u{i}","sessionId":"imp{i:04}","timestamp":"2026-01-01T00:00:00Z","message":{{"role":"user","content":"why does test {i} fail?"}}}}"#
        );
        std::fs::write(dir.join(format!("imp{i:04}.jsonl")), line + "\n").unwrap();
    }
    dir.to_string_lossy().into_owned()
}

/// How many sessions the store holds.
fn session_count(memory: &codeoid_memory) -> usize {
    let mut out = Out::new();
    // SAFETY: a live handle and an empty out-struct.
    check(unsafe { codeoid_memory_sessions(memory, out.ptr()) }).unwrap();
    out.json().as_array().unwrap().len()
}

#[test]
fn a_flag_stops_an_import_between_files_and_the_next_import_brings_the_rest() {
    const LOGS: usize = 300;
    let fx = Fixture::new();
    let path = logs(&fx, LOGS);

    let raised = Flag::new();
    raised.raise();
    let err = import(&fx, &path, Some(&raised)).unwrap_err();
    assert_eq!(err.code, CODEOID_ERROR_CANCELLED, "{err:?}");
    assert_eq!(session_count(fx.handle()), 0, "nothing is read");

    // Raised once the first session is stored, from another thread.
    let flag = Flag::new();
    let memory = fx.handle();
    let first = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            // Raises it anyway after a while, so that a failed import fails the test below
            // instead of leaving this thread waiting.
            let give_up = Instant::now() + Duration::from_secs(30);
            while session_count(memory) == 0 && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(1));
            }
            flag.raise();
        });
        let summary = import(&fx, &path, Some(&flag)).expect("import");
        watcher.join().unwrap();
        summary
    });
    assert_eq!(first["stopped"], true, "{first}");
    let stored = first["sessions_new"].as_u64().unwrap() as usize;
    assert!((1..LOGS).contains(&stored), "{first}");
    assert_eq!(session_count(fx.handle()), stored);

    let rest = import(&fx, &path, Some(&Flag::new())).expect("import");
    assert!(rest.get("stopped").is_none(), "{rest}");
    assert_eq!(
        rest["sessions_new"].as_u64().unwrap() as usize,
        LOGS - stored
    );
    assert_eq!(session_count(fx.handle()), LOGS);
}
