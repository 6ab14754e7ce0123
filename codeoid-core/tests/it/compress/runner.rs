//! The runner: real commands through `sh -c`, raw output stored first, stderr and exit codes
//! untouched.

use std::cell::RefCell;
use std::process::Command;

use codeoid_core::compress::{MemorySink, RawOutputSink, Registry, Runner, Stdin};
use codeoid_core::{Error, ErrorKind, Result};

/// What `sh -c command` prints and returns, run directly.
fn direct(command: &str) -> (Vec<u8>, Vec<u8>, i32) {
    let out = Command::new("sh").arg("-c").arg(command).output().unwrap();
    (out.stdout, out.stderr, out.status.code().unwrap_or(-1))
}

/// A stand-in `cargo` that prints 30,000 test lines (three failing) on stdout, two lines on
/// stderr, and exits with 101 like cargo does when tests fail.
const FAKE_CARGO: &str = "#!/bin/sh\necho 'running 30000 tests'\n\
    seq 1 30000 | sed -e 's/^\\(.*\\)$/test case_\\1 ... ok/' -e '/case_1000 /s/ok$/FAILED/' \
    -e '/case_2000 /s/ok$/FAILED/' -e '/case_29999 /s/ok$/FAILED/'\n\
    echo 'test result: FAILED. 29997 passed; 3 failed'\n\
    echo 'warning: unused import' >&2\nprintf 'error: test failed\\n' >&2\nexit 101\n";

/// A directory holding an executable `name` with `script` as its text.
fn fake_program(name: &str, script: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

#[test]
fn raw_output_is_stored_before_compression_and_named_in_the_hint() {
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    let bin = fake_program("cargo", FAKE_CARGO);
    let command = format!("cd . && PATH={}:\"$PATH\" cargo test", bin.path().display());
    let run = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run(&command, &sink)
        .unwrap();
    let (stdout, stderr, code) = direct(&command);
    assert_eq!(run.exit_code, 101);
    assert_eq!(code, 101);
    assert_eq!(run.stderr, stderr, "stderr must pass through unchanged");
    let stored = sink.stored();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].stdout, stdout, "the sink gets the raw stdout");
    assert_eq!(stored[0].stderr, stderr);
    assert_eq!(stored[0].exit_code, 101);
    assert_eq!(stored[0].command, command);
    let id = run.episode_id.clone().unwrap();
    assert_eq!(id, stored[0].id);
    let shown = String::from_utf8(run.stdout).unwrap();
    let compressed = run.compressed.unwrap();
    assert_eq!(compressed.rule, "cargo-test");
    assert!(
        shown.ends_with(&format!("— get_episode(\"{id}\") has the raw output]\n")),
        "{shown}"
    );
    assert!(shown.len() < stdout.len() / 20);
    for n in [1000, 2000, 29999] {
        assert!(shown.contains(&format!("test case_{n} ... FAILED\n")));
    }
    assert_eq!(
        sink.get(&id).unwrap().stdout,
        stdout,
        "get_episode gives back every byte"
    );
}

/// A sink that records whether it was called, and fails on demand.
struct OrderSink {
    calls: RefCell<Vec<usize>>,
    fail: bool,
}

impl RawOutputSink for OrderSink {
    fn store_raw(
        &self,
        _command: &str,
        stdout: &[u8],
        _stderr: &[u8],
        _code: i32,
    ) -> Result<String> {
        self.calls.borrow_mut().push(stdout.len());
        if self.fail {
            Err(Error::new(ErrorKind::Busy, "database is locked; try again"))
        } else {
            Ok("ep_7".to_owned())
        }
    }
}

#[test]
fn a_failing_sink_leaves_stdout_raw_and_reports_why() {
    let registry = Registry::builtin().unwrap();
    let sink = OrderSink {
        calls: RefCell::new(Vec::new()),
        fail: true,
    };
    let run = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run("seq 1 5000", &sink)
        .unwrap();
    let (stdout, _, _) = direct("seq 1 5000");
    assert_eq!(
        run.stdout, stdout,
        "raw output, since it could not be stored"
    );
    assert!(run.compressed.is_none() && run.episode_id.is_none());
    assert_eq!(run.store_error.unwrap().kind(), ErrorKind::Busy);
    assert_eq!(*sink.calls.borrow(), vec![stdout.len()]);
}

#[test]
fn small_output_passes_through_but_is_still_stored() {
    let registry = Registry::builtin().unwrap();
    let sink = OrderSink {
        calls: RefCell::new(Vec::new()),
        fail: false,
    };
    let run = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run("echo hi; echo oops >&2; exit 3", &sink)
        .unwrap();
    assert_eq!(run.stdout, b"hi\n");
    assert_eq!(run.stderr, b"oops\n");
    assert_eq!(run.exit_code, 3);
    assert_eq!(run.episode_id.as_deref(), Some("ep_7"));
    assert!(run.compressed.is_none());
}

#[test]
fn signals_stdin_and_working_directory() {
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    let killed = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run("kill -TERM $$", &sink)
        .unwrap();
    assert_eq!(killed.exit_code, 128 + 15);
    let closed = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run("cat; echo done", &sink)
        .unwrap();
    assert_eq!(closed.stdout, b"done\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "x").unwrap();
    let listed = Runner::new(&registry)
        .stdin(Stdin::Null)
        .current_dir(dir.path())
        .run("ls", &sink)
        .unwrap();
    assert_eq!(listed.stdout, b"marker.txt\n");
}

#[test]
fn fifty_megabytes_through_the_runner() {
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    let run = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run("seq 1 7000000", &sink)
        .unwrap();
    let raw = &sink.stored()[0].stdout;
    assert!(raw.len() > 50_000_000, "{} bytes", raw.len());
    assert!(raw.ends_with(b"6999999\n7000000\n"));
    assert!(run.stdout.len() < 2048, "{} bytes shown", run.stdout.len());
    assert_eq!(run.exit_code, 0);
}

#[test]
fn bad_commands_and_shells_are_clear_errors() {
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    let err = Runner::new(&registry).run("  ", &sink).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = Runner::new(&registry).run("echo a\0b", &sink).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("NUL character at byte 6"), "{err}");
    let err = Runner::new(&registry)
        .shell("/nonexistent/shell")
        .run("ls", &sink)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert!(
        err.message().contains("/nonexistent/shell"),
        "{}",
        err.message()
    );
    assert!(sink.stored().is_empty(), "nothing ran, nothing stored");
    let missing = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run("no-such-program-xyz", &sink)
        .unwrap();
    assert_eq!(
        missing.exit_code, 127,
        "the shell's own verdict passes through"
    );
}

#[test]
fn a_timeout_kills_the_command_and_everything_it_started() {
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    let runner = Runner::new(&registry)
        .stdin(Stdin::Null)
        .timeout(Some(std::time::Duration::from_millis(500)));
    let started = std::time::Instant::now();
    // The background sleep holds stdout open: only killing the whole group ends the run.
    let out = runner
        .run("echo started; sleep 30 & sleep 30; echo never", &sink)
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(out.timed_out);
    assert_eq!(out.exit_code, 128 + 9, "SIGKILL");
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(shown.starts_with("started\n"), "{shown}");
    assert!(
        shown
            .ends_with("timeout and was killed; the output above is what it printed until then]\n"),
        "{shown}"
    );
    assert!(!shown.contains("never"));
    assert_eq!(
        sink.stored()[0].stdout,
        b"started\n",
        "what ran is stored, raw"
    );

    // A command that ends in time is untouched.
    let quick = runner.run("echo done", &sink).unwrap();
    assert!(!quick.timed_out);
    assert_eq!(
        (quick.stdout.as_slice(), quick.exit_code),
        (&b"done\n"[..], 0)
    );
}

#[test]
fn a_caller_that_stops_waiting_kills_the_command_and_everything_it_started() {
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    let runner = Runner::new(&registry).stdin(Stdin::Null);
    let started = std::time::Instant::now();
    let mut asked = 0;
    // No timeout: only the caller's answer ends the run.
    let out = runner
        .run_while(
            "echo started; sleep 30 & sleep 30; echo never",
            &sink,
            &mut || {
                asked += 1;
                asked < 3
            },
        )
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(asked, 3, "asked every 0.1 s until told to stop");
    assert!(out.interrupted && !out.timed_out);
    assert_eq!(
        out.exit_code,
        128 + 2,
        "the shell ended on the SIGINT, as on a Ctrl-C"
    );
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(shown.starts_with("started\n"), "{shown}");
    assert!(
        shown.ends_with(
            "[codeoid: the command was interrupted and was killed; the output above is what it \
             printed until then]\n"
        ),
        "{shown}"
    );
    assert_eq!(
        sink.stored()[0].stdout,
        b"started\n",
        "what ran is stored, raw"
    );

    // A command that ends while the caller still waits is untouched.
    let quick = runner.run_while("echo done", &sink, &mut || true).unwrap();
    assert!(!quick.interrupted && !quick.timed_out);
    assert_eq!(
        (quick.stdout.as_slice(), quick.exit_code),
        (&b"done\n"[..], 0)
    );
    // A deadline still strikes while the caller is asked.
    let late = Runner::new(&registry)
        .stdin(Stdin::Null)
        .timeout(Some(std::time::Duration::from_millis(250)))
        .run_while("sleep 30", &sink, &mut || true)
        .unwrap();
    assert!(late.timed_out && !late.interrupted);
}

#[test]
fn an_interrupted_command_may_finish_on_its_sigint_and_what_it_left_is_killed() {
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    let runner = Runner::new(&registry).stdin(Stdin::Null);
    let started = std::time::Instant::now();
    let mut asked = 0;
    // A test runner that prints a summary on Ctrl-C; the background job ignores SIGINT (a
    // non-interactive shell's background jobs do) and holds stdout open.
    let out = runner
        .run_while(
            "trap 'echo summary; exit 3' INT; echo started; sleep 30 & wait",
            &sink,
            &mut || {
                asked += 1;
                asked < 2
            },
        )
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(out.interrupted);
    assert_eq!(out.exit_code, 3, "the command's own exit");
    assert_eq!(sink.stored()[0].stdout, b"started\nsummary\n");
}

#[test]
fn a_command_that_closed_its_output_is_still_timed_and_interrupted() {
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    let quiet = "echo started; exec >/dev/null 2>&1; sleep 30";
    let started = std::time::Instant::now();
    let timed = Runner::new(&registry)
        .stdin(Stdin::Null)
        .timeout(Some(std::time::Duration::from_millis(300)))
        .run(quiet, &sink)
        .unwrap();
    assert!(timed.timed_out, "exit {}", timed.exit_code);
    let interrupted = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run_while(quiet, &sink, &mut || false)
        .unwrap();
    assert!(interrupted.interrupted);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(sink.stored()[1].stdout, b"started\n");
}

/// Whether a process whose command line holds `marker` is running (read from `/proc`).
#[cfg(target_os = "linux")]
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .map(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
            .unwrap_or(false)
    })
}

/// Kills the processes whose command line holds `marker` (what a test left running).
#[cfg(target_os = "linux")]
fn kill_all(marker: &str) {
    let _ = Command::new("pkill").arg("-f").arg(marker).status();
}

#[cfg(target_os = "linux")]
#[test]
fn a_process_left_running_in_the_background_does_not_hold_the_run() {
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    // A server started with `&` that keeps printing (for 10 s at most, should the cleanup
    // fail): it holds stdout and stderr for as long as it runs. The marker names it for the
    // checks and the cleanup.
    let marker = format!("codeoid-bg-{}", std::process::id());
    let command = format!(
        "echo started; sh -c 'i=0; while [ $i -lt 200 ]; do echo tick; echo tock >&2; \
         i=$((i+1)); sleep 0.05; done' {marker} & echo ready"
    );
    for runner in [
        Runner::new(&registry).stdin(Stdin::Null),
        Runner::new(&registry)
            .stdin(Stdin::Null)
            .timeout(Some(std::time::Duration::from_secs(30))),
    ] {
        let started = std::time::Instant::now();
        let out = runner.run(&command, &sink).unwrap();
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
        assert!(out.left_running && !out.timed_out, "{out:?}");
        assert_eq!(out.exit_code, 0);
        let shown = String::from_utf8(out.stdout).unwrap();
        assert!(shown.starts_with("started\n"), "{shown}");
        assert!(shown.contains("ready\n"), "{shown}");
        assert!(
            shown.ends_with(
                "[codeoid: the command ended, but a process it started still runs and holds its \
                 output; it was left running, and what it prints from now on is not shown]\n"
            ),
            "{shown}"
        );
        let stored = sink.stored().last().unwrap().clone();
        assert!(stored.stdout.starts_with(b"started\n"));
        // The background process runs on, its output read and dropped.
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(running(&marker), "the background process was left running");
        kill_all(&marker);
    }
    // All the command printed before it exited is kept, however much, while the background
    // process holds stdout (and writes to stderr only, so the lines are not interleaved).
    let quiet_holder = format!(
        "sh -c 'i=0; while [ $i -lt 200 ]; do echo tock >&2; i=$((i+1)); sleep 0.05; done' \
         {marker} & seq 1 100000"
    );
    let out = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run(&quiet_holder, &sink)
        .unwrap();
    kill_all(&marker);
    assert!(out.left_running, "exit {}", out.exit_code);
    let stored = sink.stored().last().unwrap().stdout.clone();
    let expected: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert!(
        stored == expected.as_bytes(),
        "{} bytes kept of {}",
        stored.len(),
        expected.len()
    );
    // A background process that writes without pause may never leave the pipe empty: the run
    // still returns.
    let writer = format!("codeoid-yes-{}", std::process::id());
    let started = std::time::Instant::now();
    let out = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run(&format!("yes {writer} & echo foreground"), &sink)
        .unwrap();
    kill_all(&writer);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(out.left_running, "exit {}", out.exit_code);
    let stored = sink.stored().last().unwrap().stdout.clone();
    assert!(String::from_utf8_lossy(&stored).contains("foreground\n"));
    // What it kept of the writer after the exit is bounded: 8 MiB, a read, and what arrived
    // before the exit was seen.
    assert!(stored.len() <= (10 << 20), "{} bytes", stored.len());
    // Without `&` nothing is left running and nothing is cut.
    let plain = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run("sh -c 'sleep 0.3; echo late'; echo done", &sink)
        .unwrap();
    assert!(!plain.left_running);
    assert_eq!(plain.stdout, b"late\ndone\n");
}

#[test]
fn output_a_filter_writes_after_the_shell_exited_is_kept() {
    if Command::new("bash").arg("-c").arg("true").status().is_err() {
        eprintln!("no bash here; skipping");
        return;
    }
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    // The script's output goes through a filter bash does not wait for: when bash exits the
    // filter still has lines in hand, and writes them after.
    let out = Runner::new(&registry)
        .stdin(Stdin::Null)
        .run(
            "bash -c 'exec > >(while IFS= read -r l; do printf \"[log] %s\\n\" \"$l\"; done) \
             2>&1; seq 1 3000; echo END'",
            &sink,
        )
        .unwrap();
    let stored = sink.stored().last().unwrap().stdout.clone();
    let expected: String = (1..=3000)
        .map(|i| format!("[log] {i}\n"))
        .chain(std::iter::once("[log] END\n".to_owned()))
        .collect();
    assert!(
        stored == expected.as_bytes(),
        "{} bytes kept of {}, left running: {}",
        stored.len(),
        expected.len(),
        out.left_running
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_process_that_left_the_group_no_longer_holds_a_killed_run() {
    let registry = Registry::builtin().unwrap();
    let sink = MemorySink::new();
    let marker = format!("codeoid-setsid-{}", std::process::id());
    // `setsid` puts the sleeper beyond the group kill; it holds stdout for 30 s (in short
    // sleeps, so that killing the shell that carries the marker ends it).
    let command = format!(
        "echo started; setsid sh -c 'i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); \
         done' {marker} & sleep 30"
    );
    let started = std::time::Instant::now();
    let out = Runner::new(&registry)
        .stdin(Stdin::Null)
        .timeout(Some(std::time::Duration::from_millis(300)))
        .run(&command, &sink)
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(out.timed_out && out.left_running, "{out:?}");
    assert_eq!(sink.stored()[0].stdout, b"started\n");
    kill_all(&marker);
}

/// With memory switched off the `get_episode` tool answers that memory is off, so a marker
/// naming it would point at output the model can never read: `Memory::run` then shows stdout
/// whole (and still stores it, as turns are still recorded), while `Memory::run_in` with a shell
/// command for the raw output, which reads the store whether memory is on or not, compresses.
#[test]
fn with_memory_off_run_shows_stdout_whole_and_still_stores_it() {
    use codeoid_core::store::NewSession;
    use codeoid_core::{Memory, MemoryConfig};

    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("project");
    std::fs::create_dir_all(&workspace).unwrap();
    let open = |memory_enabled| {
        Memory::open(MemoryConfig {
            db_path: Some(dir.path().join("codeoid.db")),
            workspace_dir: Some(workspace.clone()),
            memory_enabled,
            ..crate::tools::lexical_config()
        })
        .unwrap()
    };
    let (expected, _, _) = direct("seq 1 2000");

    let off = open(false);
    let session = off.start_session(NewSession::default()).unwrap().id;
    let out = off.run(&session, "seq 1 2000").unwrap();
    assert!(out.compressed.is_none());
    assert_eq!(out.stdout, expected);
    let id = out.episode_id.unwrap();
    let episode = off.episode(&id).unwrap();
    let blob = episode.blobs.iter().find(|b| b.role == "stdout").unwrap();
    assert_eq!(off.blob(&blob.blob_id).unwrap(), expected);
    let tool = off.call_tool(
        Some(&session),
        "get_episode",
        &format!(r#"{{"episode_id": "{id}"}}"#),
    );
    assert!(
        tool.is_error && tool.text.contains("switched off"),
        "{}",
        tool.text
    );

    let show = "codeoid --workspace ws_x show --blob stdout";
    let out = off
        .run_in(&session, "seq 1 2000", &workspace, Stdin::Null, Some(show))
        .unwrap();
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(out.compressed.is_some(), "{shown}");
    assert!(
        shown.contains(show) && !shown.contains("get_episode"),
        "{shown}"
    );

    let on = open(true);
    let out = on.run(&session, "seq 1 2000").unwrap();
    let shown = String::from_utf8(out.stdout).unwrap();
    let id = out.episode_id.unwrap();
    assert!(shown.contains(&format!("get_episode(\"{id}\")")), "{shown}");
    assert!(shown.len() < expected.len() / 10, "{shown}");
}
