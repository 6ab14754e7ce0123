//! End-to-end tests of the `codeoid` binary: every command run as a user would, against a store
//! file in a temporary directory and the real logs in `../shared/evaldata`.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("store/codeoid.db")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn codeoid(&self, args: &[&str]) -> Output {
        self.codeoid_in(self.dir.path(), args, None)
    }

    fn codeoid_in(&self, cwd: &Path, args: &[&str], stdin: Option<&str>) -> Output {
        let mut child = self
            .command_in(cwd, args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .spawn()
            .unwrap();
        if let Some(text) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        child.wait_with_output().unwrap()
    }

    /// The command `codeoid <args>` in `cwd` with this environment's store, home and model,
    /// stdout and stderr piped.
    fn command_in(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_codeoid"));
        command
            .args(args)
            .current_dir(cwd)
            .env("CODEOID_DB", self.db())
            .env("HOME", self.home())
            // The real test model, so no command ever tries the network for the default one.
            .env("CODEOID_MODEL_DIR", test_model_dir())
            .env_remove("CODEOID_SESSION")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The checkpoint `make test` fetches; these tests need it, like the core's embedding tests.
fn test_model_dir() -> PathBuf {
    let dir = std::env::var_os("CODEOID_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .expect(
            "CODEOID_TEST_MODEL_DIR must point at all-MiniLM-L6-v2 (`make test` fetches it with \
         scripts/fetch-test-model.sh)",
        );
    assert!(
        dir.join("config.json").is_file(),
        "CODEOID_TEST_MODEL_DIR={} has no config.json",
        dir.display()
    );
    dir
}

fn evaldata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/evaldata")
}

#[test]
fn quickstart_without_logs_records_the_demo_and_shows_memory() {
    let env = Env::new();
    let first = stdout(&env.codeoid(&["quickstart"]));
    assert!(first.contains("recording a demo session"), "{first}");
    assert!(first.contains("# Memory Index — demo-workspace"), "{first}");
    assert!(first.contains("tool_call: Bash(cargo test)"), "{first}");
    assert!(first.contains("compressed by rule cargo-test"), "{first}");
    // The recall section ran with the real model: its hits carry a non-zero vector signal.
    let recall_section = first.split("── recall(").nth(1).unwrap();
    assert!(
        recall_section.contains("(vec 0.") && !recall_section.contains("(vec 0.00"),
        "{first}"
    );
    assert!(
        first.contains("test parser::tests::nested_arrays ... FAILED"),
        "{first}"
    );
    // The demo workspace is not the one the current directory selects: the commands it
    // suggests name it, and they work as printed.
    let next = first.lines().find(|l| l.starts_with("next: ")).unwrap();
    let timeline = next
        .split('`')
        .find(|c| c.ends_with(" timeline"))
        .expect("a timeline command");
    assert!(timeline.starts_with("codeoid --workspace "), "{next}");
    let root = timeline
        .strip_prefix("codeoid --workspace ")
        .and_then(|t| t.strip_suffix(" timeline"))
        .unwrap();
    let shown = stdout(&env.codeoid(&["--workspace", root.trim_matches('\''), "timeline"]));
    assert!(shown.contains("tool_call: Bash(cargo test)"), "{shown}");
    let again = stdout(&env.codeoid(&["quickstart"]));
    let count = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("workspace ws_"))
            .unwrap()
            .to_string()
    };
    assert_eq!(
        count(&first),
        count(&again),
        "a second quickstart must add nothing"
    );
}

#[test]
fn quickstart_imports_claude_code_logs_when_the_machine_has_them() {
    let env = Env::new();
    let projects = env.home().join(".claude/projects/demo-project");
    std::fs::create_dir_all(&projects).unwrap();
    std::fs::copy(
        evaldata().join("claude-code-sessions/spotter/tool_heavy.jsonl"),
        projects.join("tool_heavy.jsonl"),
    )
    .unwrap();
    let out = stdout(&env.codeoid(&["quickstart"]));
    assert!(out.contains("importing"), "{out}");
    assert!(out.contains("1 sessions new"), "{out}");
    assert!(!out.contains("demo session"), "{out}");
}

#[test]
fn import_timeline_show_and_fork_on_a_real_log() {
    let env = Env::new();
    let log = evaldata().join("claude-code-sessions/spotter/short.jsonl");
    let imported = stdout(&env.codeoid(&["import", log.to_str().unwrap()]));
    assert!(imported.contains("1 sessions new"), "{imported}");
    let again = stdout(&env.codeoid(&["import", log.to_str().unwrap()]));
    assert!(again.contains("0 turns added"), "{again}");
    assert!(!again.contains("differed"), "{again}");

    // A copy whose last text turn was edited: the stored tail follows it, and the summary says
    // that stored episodes went with the old turn.
    let text = std::fs::read_to_string(&log).unwrap();
    let last_text = text.rfind("\"text\":\"").unwrap() + "\"text\":\"".len();
    let edited = env.dir.path().join("edited/short.jsonl");
    std::fs::create_dir_all(edited.parent().unwrap()).unwrap();
    std::fs::write(
        &edited,
        format!("{}EDITED {}", &text[..last_text], &text[last_text..]),
    )
    .unwrap();
    let replaced = stdout(&env.codeoid(&["import", edited.to_str().unwrap()]));
    assert!(
        replaced.contains("stored turns differed from their logs"),
        "{replaced}"
    );
    let empty = env.dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let none = stdout(&env.codeoid(&["import", empty.to_str().unwrap()]));
    assert!(none.contains("no session logs there"), "{none}");

    let stats = stdout(&env.codeoid(&["stats"]));
    let ws = stats
        .lines()
        .find(|l| l.starts_with("ws_"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let timeline = stdout(&env.codeoid(&["-w", &ws, "timeline", "-n", "60"]));
    let id = timeline
        .lines()
        .find_map(|l| l.split("(episode_id: ").nth(1))
        .unwrap()
        .trim_end_matches(')')
        .to_string();
    let raw = stdout(&env.codeoid(&["-w", &ws, "show", &id, "--raw"]));
    assert!(!raw.is_empty());
    let text = stdout(&env.codeoid(&["-w", &ws, "show", &id]));
    assert!(text.contains(&format!("- episode_id: {id}")), "{text}");
    assert!(
        text.ends_with(&format!("{raw}\n")),
        "the model-facing text ends with the exact bytes"
    );

    let sessions = stdout(&env.codeoid(&["-w", &ws, "sessions"]));
    let session = sessions.split_whitespace().nth(1).unwrap().to_string();
    let forked = stdout(&env.codeoid(&[
        "-w",
        &ws,
        "fork",
        &session,
        "--name",
        "try openai",
        "--to",
        "openai_chat:gpt-5",
    ]));
    assert!(forked.contains("forked into session"), "{forked}");
    assert!(forked.contains("handoff to openai_chat"), "{forked}");
    let listed = stdout(&env.codeoid(&["-w", &ws, "sessions"]));
    assert!(listed.contains("\"try openai\", fork of"), "{listed}");
}

#[test]
fn index_shows_the_topic_clusters_a_harness_would_see() {
    let env = Env::new();
    let log =
        evaldata().join("claude-code-sessions/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    env.codeoid(&["import", log.to_str().unwrap()]);
    let stats = stdout(&env.codeoid(&["stats"]));
    let ws = stats
        .lines()
        .find(|l| l.starts_with("ws_"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    let index = stdout(&env.codeoid(&["-w", &ws, "index", "--wait", "300"]));
    assert!(index.contains("## Topic clusters"), "{index}");
    assert!(index.contains("## Hot files"), "{index}");
}

#[test]
fn errors_name_the_problem_and_exit_nonzero() {
    let env = Env::new();
    // A command that only reads refuses a store that does not exist, and leaves none behind.
    let nothing = env.codeoid(&["timeline"]);
    assert_eq!(nothing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&nothing.stderr).contains("no store at"));
    assert!(!env.db().exists() && !env.db().parent().unwrap().exists());
    let folder = env.codeoid(&["--db", env.dir.path().to_str().unwrap(), "stats"]);
    assert_eq!(folder.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&folder.stderr).contains("is a directory"));
    stdout(&env.codeoid(&["run", "--", "true"])); // a command that records creates it
    assert!(env.db().exists());
    let missing = env.codeoid(&["import", "/definitely/not/here"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/definitely/not/here"));
    let unknown = env.codeoid(&["show", "ep_0000000000000000"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("not found"));
    let bad_ws = env.codeoid(&["-w", "ws_0000000000000000", "timeline"]);
    assert_eq!(bad_ws.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad_ws.stderr).contains("codeoid stats"));
    // A negative count is told the range, not taken for an unknown option.
    for (args, says) in [
        (&["timeline", "-n", "-1"][..], "-1 is not in 1..=1000"),
        (&["timeline", "--offset", "-3"][..], "-3 is negative"),
        (&["recall", "x", "-n", "-2"][..], "-2 is not in 1..=100"),
    ] {
        let negative = env.codeoid(args);
        assert_eq!(negative.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&negative.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn paths_that_are_no_store_are_refused_and_left_as_they_are() {
    let env = Env::new();
    let refused = |args: &[&str], says: &str| {
        let out = env.codeoid(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    };
    // An empty file (a placeholder, a failed copy) is not filled by a command that only reads.
    let empty = env.dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    refused(&["--db", empty.to_str().unwrap(), "stats"], "is empty");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    // A trailing separator names a directory, which would otherwise become a file.
    let log =
        evaldata().join("claude-code-sessions/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    let log = log.to_str().unwrap();
    let slashed = format!("{}/", env.dir.path().join("store-dir").display());
    refused(&["--db", &slashed, "import", log], "ends with '/'");
    assert!(!env.dir.path().join("store-dir").exists());
    // A path that cannot be imported creates no store for it.
    let fresh = env.dir.path().join("fresh.db");
    refused(
        &[
            "--db",
            fresh.to_str().unwrap(),
            "import",
            "/definitely/not/here",
        ],
        "/definitely/not/here",
    );
    refused(
        &["--db", fresh.to_str().unwrap(), "import", "/dev/null"],
        "neither a file nor a folder",
    );
    assert!(!fresh.exists());
    // A named pipe as the store is named as such, by readers and writers alike.
    #[cfg(unix)]
    {
        let fifo = env.dir.path().join("pipe.db");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            refused(
                &["--db", fifo.to_str().unwrap(), "stats"],
                "not a regular file",
            );
            refused(
                &["--db", fifo.to_str().unwrap(), "import", log],
                "not a regular file",
            );
        }
    }
}

#[test]
fn run_keeps_exit_code_and_stderr_and_stores_the_raw_output() {
    let env = Env::new();
    let project = env.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let command =
        "for i in $(seq 1 500); do echo line $i of a long log; done; echo boom >&2; exit 4";
    let out = env.codeoid_in(&project, &["run", "--", command], None);
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(out.stderr, b"boom\n");
    let shown = String::from_utf8(out.stdout).unwrap();
    // The model reads this through its shell: the hint is a command it can run, from anywhere.
    let hint = shown
        .lines()
        .last()
        .and_then(|l| l.strip_suffix("` prints the raw output]"))
        .and_then(|l| l.split_once(" — `"))
        .map(|(_, command)| command)
        .expect("the hint names a command");
    let words: Vec<&str> = hint.split(' ').collect();
    assert_eq!(words[..2], ["codeoid", "--workspace"], "{hint}");
    assert_eq!(words[3..6], ["show", "--blob", "stdout"], "{hint}");
    let elsewhere = env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let raw = env.codeoid_in(&elsewhere, &words[1..], None);
    let expected: String = (1..=500)
        .map(|i| format!("line {i} of a long log\n"))
        .collect();
    assert_eq!(String::from_utf8(raw.stdout).unwrap(), expected);
}

#[test]
fn a_closed_stderr_costs_messages_not_the_work() {
    let env = Env::new();
    let project = env.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let with_stderr_closed = |args: &[&str]| {
        let mut child = env
            .command_in(&project, args)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        drop(child.stderr.take()); // `2>&1 | head` once head has left
        child.wait_with_output().unwrap()
    };
    // An error's message is lost, its exit status is not (it used to panic: 101).
    let out = with_stderr_closed(&["show", "ep_00000000000000000000"]);
    assert_eq!(out.status.code(), Some(1));
    // A command's own stderr is lost; its stdout, its exit code and the stored output are not.
    let out = with_stderr_closed(&["run", "--", "echo kept; echo lost >&2; exit 3"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"kept\n");
    let timeline = stdout(&env.codeoid_in(&project, &["timeline"], None));
    assert!(timeline.contains("shell(echo kept"), "{timeline}");
}

#[test]
fn run_returns_while_a_background_process_it_started_keeps_printing() {
    let env = Env::new();
    let project = env.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let alive = env.dir.path().join("alive");
    // A server-like job that prints a line every 50 ms for 1.5 s, then touches `alive`. It
    // inherits the pipes `codeoid run` reads; once `codeoid` has exited, a write into a pipe
    // nobody reads would end it with SIGPIPE before it got there.
    let command = format!(
        "echo started; (i=0; while [ $i -lt 30 ]; do echo line $i; i=$((i+1)); sleep 0.05; \
         done; touch '{}') &",
        alive.display()
    );
    let started = std::time::Instant::now();
    let out = env.codeoid_in(&project, &["run", "--", &command], None);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let shown = stdout(&out);
    assert!(shown.starts_with("started\n"), "{shown}");
    assert!(shown.contains("it was left running"), "{shown}");
    assert!(!alive.exists(), "codeoid returned before the job ended");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !alive.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(alive.exists(), "the background job printed on to its end");
}

#[test]
fn run_passes_several_words_as_the_arguments_they_are() {
    let env = Env::new();
    let project = env.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    for name in ["my file", "my", "file"] {
        std::fs::write(project.join(name), name).unwrap();
    }
    let out = env.codeoid_in(&project, &["run", "--", "rm", "my file"], None);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !project.join("my file").exists(),
        "the file named by the argument is gone"
    );
    assert!(project.join("my").exists() && project.join("file").exists());
    // Shell syntax inside an argument is data, not syntax.
    let out = env.codeoid_in(
        &project,
        &["run", "--", "printf", "%s|", "x y", "c'd"],
        None,
    );
    assert_eq!(stdout(&out), "x y|c'd|");
    // One argument is still a whole command line.
    let out = env.codeoid_in(&project, &["run", "--", "printf a | tr a b"], None);
    assert_eq!(stdout(&out), "b");
    let timeline = stdout(&env.codeoid_in(&project, &["timeline"], None));
    assert!(timeline.contains("shell(rm 'my file')"), "{timeline}");
}

#[test]
fn run_behaves_as_the_shell_it_stands_in_for() {
    let env = Env::new();
    // Two projects outside git: two workspaces.
    let project = env.dir.path().join("project");
    let sub = project.join("web");
    let other = env.dir.path().join("other");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::create_dir_all(&other).unwrap();

    // It runs where it was started, with the caller's stdin (`cd web && codeoid run ...`,
    // `producer | codeoid run -- consumer`).
    let out = env.codeoid_in(
        &sub,
        &["run", "--session", "s1", "--", "pwd; cat"],
        Some("piped\n"),
    );
    let shown = stdout(&out);
    let pwd = std::fs::canonicalize(&sub).unwrap();
    assert!(
        shown.starts_with(&format!("{}\npiped\n", pwd.display())),
        "{shown}"
    );

    // The same harness session, after its agent changed to another project: the command runs
    // there and its output is recorded in the session's own workspace.
    let out = env.codeoid_in(&other, &["run", "--session", "s1", "--", "pwd"], None);
    let pwd = std::fs::canonicalize(&other).unwrap();
    assert_eq!(stdout(&out), format!("{}\n", pwd.display()));
    let sessions = stdout(&env.codeoid_in(&sub, &["sessions"], None));
    assert!(sessions.contains("s1"), "{sessions}");
    let timeline = stdout(&env.codeoid_in(&sub, &["timeline"], None));
    assert_eq!(
        timeline.matches("tool_call: shell(pwd").count(),
        2,
        "{timeline}"
    );
    let elsewhere = stdout(&env.codeoid_in(&other, &["sessions"], None));
    assert!(!elsewhere.contains("s1"), "{elsewhere}");

    // A store it cannot use never stops the command: it runs, uncompressed, after a warning.
    let broken = env.dir.path().join("not-a-store");
    std::fs::write(&broken, "this is not a database").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_codeoid"))
        .args([
            "--db",
            broken.to_str().unwrap(),
            "run",
            "--",
            "echo ran; exit 3",
        ])
        .current_dir(&other)
        .env("HOME", env.home())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"ran\n");
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(
        warning.contains("running the command without storing its output"),
        "{warning}"
    );
    assert_eq!(
        std::fs::read(&broken).unwrap(),
        b"this is not a database",
        "the file is left alone"
    );
}

#[test]
fn the_claude_code_hook_rewrites_bash_calls_with_the_session() {
    let env = Env::new();
    let input = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","session_id":"abc-123","cwd":"/tmp","tool_input":{"command":"cargo test","description":"tests"}}"#;
    let out = env.codeoid_in(env.dir.path(), &["hook", "claude-code"], Some(input));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let command = answer["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    assert!(
        command.ends_with(" run --session 'abc-123' -- 'cargo test'"),
        "{command}"
    );
    assert_eq!(
        answer["hookSpecificOutput"]["updatedInput"]["description"],
        "tests"
    );
    let garbage = env.codeoid_in(env.dir.path(), &["hook", "claude-code"], Some("not json"));
    assert_eq!(garbage.status.code(), Some(1));
    let settings: serde_json::Value =
        serde_json::from_str(&stdout(&env.codeoid(&["hook", "claude-code-settings"]))).unwrap();
    assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], "Bash");

    // A store named on the command line is the store of what the hook writes, as an absolute
    // path (Claude Code runs them in other directories).
    let out = env.codeoid_in(
        env.dir.path(),
        &["--db", "mine.db", "hook", "claude-code"],
        Some(input),
    );
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let command = answer["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    let db = env.dir.path().join("mine.db");
    assert!(
        command.contains(&format!(" --db {} run --session 'abc-123'", db.display())),
        "{command}"
    );
    let settings: serde_json::Value = serde_json::from_str(&stdout(&env.codeoid(&[
        "--db",
        db.to_str().unwrap(),
        "hook",
        "claude-code-settings",
    ])))
    .unwrap();
    let hook = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        hook.ends_with(&format!(" --db {} hook claude-code", db.display())),
        "{hook}"
    );
}

/// A folder or file this process cannot write while it lives: permissions, or the immutable
/// attribute when running as root (which ignores permissions).
struct Unwritable(PathBuf, u32, bool);

impl Unwritable {
    fn new(path: &Path) -> Option<Unwritable> {
        use std::os::unix::fs::PermissionsExt;
        let writable = || {
            if path.is_dir() {
                let probe = path.join(".probe");
                let ok = std::fs::write(&probe, b"x").is_ok();
                let _ = std::fs::remove_file(&probe);
                ok
            } else {
                std::fs::OpenOptions::new().append(true).open(path).is_ok()
            }
        };
        let mode = std::fs::metadata(path).unwrap().permissions().mode();
        let read_only = if path.is_dir() { 0o555 } else { 0o444 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(read_only)).unwrap();
        let mut guard = Unwritable(path.to_path_buf(), mode, false);
        if writable() {
            guard.2 = Command::new("chattr")
                .arg("+i")
                .arg(path)
                .status()
                .is_ok_and(|s| s.success());
        }
        (!writable()).then_some(guard)
    }
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.2 {
            let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
        }
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(self.1));
    }
}

#[test]
fn read_commands_read_a_store_they_may_not_write() {
    let env = Env::new();
    stdout(&env.codeoid(&["quickstart"]));
    let workspace = env.dir.path().join("store/demo-workspace");
    let ws = workspace.to_str().unwrap();
    let stats = stdout(&env.codeoid(&["stats"]));
    let timeline = stdout(&env.codeoid(&["-w", ws, "timeline"]));
    let folder = env.db().parent().unwrap().to_path_buf();
    let store = std::fs::read(env.db()).unwrap();
    let Some(guard) = Unwritable::new(&folder) else {
        eprintln!("cannot make a folder read-only in this environment; skipping");
        return;
    };
    let read_only = stdout(&env.codeoid(&["stats"]));
    let (first, rest) = read_only.split_once('\n').unwrap();
    assert!(
        first.ends_with("(read-only: this process cannot write it now)"),
        "{first}"
    );
    assert!(stats.ends_with(rest), "{read_only}");
    assert_eq!(stdout(&env.codeoid(&["-w", ws, "timeline"])), timeline);
    let recalled = stdout(&env.codeoid(&["-w", ws, "recall", "crash on arrays inside arrays"]));
    assert!(recalled.contains("episode_id: ep_"), "{recalled}");
    // A command that records still needs write access, and says so.
    let log = evaldata().join("claude-code-sessions/spotter/short.jsonl");
    let refused = env.codeoid(&["import", log.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("cannot open store"), "{stderr}");
    drop(guard);
    let names = || {
        let mut names: Vec<_> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(std::fs::read(env.db()).unwrap(), store);
    assert_eq!(names(), ["codeoid.db", "demo-workspace"]);

    // The same with only the file unwritable: nothing is left beside it either.
    let Some(_guard) = Unwritable::new(&env.db()) else {
        eprintln!("cannot make a file read-only in this environment; skipping");
        return;
    };
    let read_only = stdout(&env.codeoid(&["stats"]));
    assert!(read_only.contains("(read-only"), "{read_only}");
    assert_eq!(stdout(&env.codeoid(&["-w", ws, "timeline"])), timeline);
    assert_eq!(names(), ["codeoid.db", "demo-workspace"]);
}

#[test]
fn recall_finds_earlier_work_by_meaning_and_recall_file_the_last_read() {
    let env = Env::new();
    stdout(&env.codeoid(&["quickstart"]));
    let workspace = env.dir.path().join("store/demo-workspace");
    let ws = workspace.to_str().unwrap();

    let scored = stdout(&env.codeoid(&[
        "-w",
        ws,
        "recall",
        "crash on arrays inside arrays",
        "--scores",
        "-n",
        "3",
    ]));
    let lines: Vec<&str> = scored.lines().collect();
    assert_eq!(lines.len(), 3, "{scored}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("ep_") && l.contains(" score ")),
        "{scored}"
    );
    // "arrays inside arrays" is what the nested-array fix was about, in other words.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("parse_array") || l.contains("src/parser.rs")),
        "{scored}"
    );

    let text = stdout(&env.codeoid(&["-w", ws, "recall", "cargo test", "--tool", "Bash"]));
    assert!(text.contains("episode_id: ep_"), "{text}");
    assert!(text.contains("Bash(cargo test)"), "{text}");
    assert!(!text.contains("Read("), "the tool filter must hold: {text}");

    let file = stdout(&env.codeoid(&["-w", ws, "recall-file", "src/parser.rs"]));
    assert!(file.contains("src/parser.rs"), "{file}");
    assert!(file.contains("episode_id"), "{file}");

    let bad = env.codeoid(&["-w", ws, "recall", "x", "-n", "0"]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("limit"), "{err}");
    // The tool shows at most 20; --scores lists up to 100.
    let over = env.codeoid(&["-w", ws, "recall", "x", "-n", "50"]);
    assert!(!over.status.success());
    let err = String::from_utf8_lossy(&over.stderr);
    assert!(err.contains("--scores"), "{err}");
    stdout(&env.codeoid(&["-w", ws, "recall", "x", "-n", "50", "--scores"]));
}
