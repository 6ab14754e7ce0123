//! Failures in the middle of a long build log: what agents run is `./build.sh 2>&1`, stdout and
//! stderr merged, and the fallback rule keeps only its first and last lines and its facts. Every
//! common shape of a failing step (a missing command, make's `***` lines, errno texts, refused
//! connections, signals, assertions, exceptions, Terraform's boxed diagnostics) must survive
//! there; lines that only mention errors must not.

use codeoid_core::compress::Registry;

/// `failure` between 100 lines of progress on each side, as `./build.sh 2>&1` prints it.
fn log_around(failure: &[&str]) -> String {
    let mut lines: Vec<String> = (0..100)
        .map(|i| format!("step {i}: processing item {i} of 200"))
        .collect();
    lines.extend(failure.iter().map(|l| (*l).to_owned()));
    lines.extend((100..200).map(|i| format!("step {i}: processing item {i} of 200")));
    lines.join("\n") + "\n"
}

/// What the model reads of `log` run as `command`.
fn shown(command: &str, log: &str) -> String {
    let registry = Registry::builtin().unwrap();
    let compressed = registry
        .compress(command, log.as_bytes())
        .unwrap_or_else(|| panic!("{command}: not compressed"));
    assert_eq!(compressed.rule, "head-tail", "{command}");
    compressed.text
}

/// Each shape, alone in the middle of a log and all of them together, is a line of the output.
fn each_survives(shapes: &[&str]) {
    for shape in shapes {
        let text = shown("./build.sh 2>&1", &log_around(&[shape]));
        assert!(text.lines().any(|l| l == *shape), "lost {shape:?}:\n{text}");
    }
    let text = shown("./build.sh 2>&1", &log_around(shapes));
    for shape in shapes {
        assert!(
            text.lines().any(|l| l == *shape),
            "lost {shape:?} among the others"
        );
    }
}

#[test]
fn a_missing_command_survives() {
    each_survives(&[
        "./build.sh: line 12: jq: command not found",
        "zsh: command not found: jq",
        "sh: 1: ./run: not found",
    ]);
}

#[test]
fn make_and_other_build_tool_failures_survive() {
    each_survives(&[
        "make: *** No rule to make target 'x'.  Stop.",
        "make[1]: *** [Makefile:20: build] Error 2",
        "ninja: build stopped: subcommand failed.",
        "CMake Error at CMakeLists.txt:3 (find_package):",
        "collect2: error: ld returned 1 exit status",
    ]);
}

#[test]
fn errno_texts_survive() {
    each_survives(&[
        "cp: cannot stat 'x': No such file or directory",
        "sh: 1: ./run: Permission denied",
        "mkdir: cannot create directory 'out': File exists",
        "write /var/lib/docker/tmp/x: no space left on device",
    ]);
}

#[test]
fn network_and_transfer_failures_survive() {
    each_survives(&[
        "Permission denied (publickey).",
        "curl: (22) The requested URL returned error: 500",
        "rsync error: some files/attrs were not transferred (see previous errors) (code 23)",
        "ssh: connect to host h port 22: Connection refused",
        "fatal: Could not read from remote repository.",
    ]);
}

#[test]
fn processes_a_signal_ended_survive() {
    each_survives(&[
        "Killed",
        "./build.sh: line 32: 20597 Killed                  ./scripts/warm_cache.sh",
        "Segmentation fault (core dumped)",
        "Aborted (core dumped)",
    ]);
}

#[test]
fn assertions_exceptions_and_panics_survive() {
    each_survives(&[
        "Assertion failed: (x), function f, file a.c, line 3.",
        "app: src/main.c:8: main: Assertion `cfg != NULL' failed.",
        "java.lang.NullPointerException",
        "Exception in thread \"main\" java.lang.IllegalStateException: closed",
        "Traceback (most recent call last):",
        "panic: runtime error: index out of range [3] with length 3",
        "FATAL: password authentication failed for user \"app\"",
    ]);
}

#[test]
fn package_manager_errors_survive() {
    each_survives(&[
        "npm ERR! code E404",
        "npm error code E404",
        "error Command failed with exit code 1.",
        "E: Unable to locate package libfoo-dev",
    ]);
}

/// `terraform plan 2>&1`: the box of each diagnostic, edges included, is shown whole, and what
/// follows it is elided again.
#[test]
fn a_terraform_error_box_survives_whole() {
    let error_box = [
        "╷",
        "│ Error: Invalid reference",
        "│ ",
        "│   on main.tf line 12, in resource \"aws_s3_bucket\" \"b\":",
        "│   12:   bucket = var.nme",
        "│ ",
        "│ A reference to a resource type must be followed by at least one attribute access,",
        "│ specifying the resource name.",
        "╵",
    ];
    let mut lines: Vec<String> = (0..80)
        .map(|i| format!("  # aws_instance.web[{i}] will be created"))
        .collect();
    lines.extend(error_box.iter().map(|l| (*l).to_owned()));
    lines.extend((0..60).map(|i| format!("  + tag_{i} = \"x\"")));
    let text = shown("terraform plan 2>&1", &(lines.join("\n") + "\n"));
    assert!(
        text.contains(&format!("\n{}\n[codeoid: ", error_box.join("\n"))),
        "{text}"
    );
    assert!(!text.contains("tag_0 "), "{text}");
}

/// Lines that mention errors without reporting one are elided like any other.
#[test]
fn lines_that_only_mention_errors_are_elided() {
    let mentions = [
        "cc -O2 -Wall -Werror -Wno-error=unused-variable -c src/error.c -o build/error.o",
        "Found 0 errors.",
        "error_count = 0",
        "This release improves error messages and error recovery.",
        "   Compiling thiserror v1.0.69",
        "test error::tests::reports_permission_denied ... ok",
        "Killed 3 stale worker processes",
        "Process completed with exit code 0.",
    ];
    let text = shown("./build.sh 2>&1", &log_around(&mentions));
    for line in mentions {
        assert!(!text.contains(line), "kept {line:?}:\n{text}");
    }
    assert!(
        text.contains("[codeoid: 128 lines elided (output lines 41–168)]"),
        "{text}"
    );
}
