//! Golden fixtures: real captured command output in `fixtures/compress/<rule>/<case>.in`, the
//! command line and exit code in `<case>.json`, and what the model reads in `<case>.out`.
//!
//! A case without `.out` must pass through unchanged. `CODEOID_BLESS=1` rewrites the `.out` files
//! from the current rules (review the diff before committing). Every case, blessed or not, must
//! keep every fact of its rule.

use std::fs;
use std::path::{Path, PathBuf};

use codeoid_core::compress::{BINARY_RULE, Registry};
use serde::Deserialize;

use super::fixtures_dir;

/// The episode id the golden outputs are written with.
pub(crate) const FIXTURE_ID: &str = "fixture";

/// `<case>.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Meta {
    pub(crate) command: String,
    pub(crate) exit_code: i32,
    pub(crate) source: String,
}

/// One fixture case.
pub(crate) struct Case {
    pub(crate) rule_dir: String,
    pub(crate) name: String,
    pub(crate) meta: Meta,
    pub(crate) input: Vec<u8>,
    pub(crate) out_path: PathBuf,
}

/// Every case under `fixtures/compress`, sorted by rule and name.
pub(crate) fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut dirs: Vec<PathBuf> = fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let rule_dir = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut metas: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        metas.sort();
        for meta_path in metas {
            let name = meta_path
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta: Meta = serde_json::from_slice(&fs::read(&meta_path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", meta_path.display()));
            let input = fs::read(dir.join(format!("{name}.in"))).unwrap();
            cases.push(Case {
                out_path: dir.join(format!("{name}.out")),
                rule_dir: rule_dir.clone(),
                name,
                meta,
                input,
            });
        }
    }
    cases
}

fn bless() -> bool {
    std::env::var_os("CODEOID_BLESS").is_some_and(|v| v == "1")
}

fn write_or_remove(path: &Path, contents: Option<&str>) {
    match contents {
        Some(text) => fs::write(path, text).unwrap(),
        None if path.exists() => fs::remove_file(path).unwrap(),
        None => {}
    }
}

#[test]
fn every_fixture_matches_its_golden_output_and_keeps_its_facts() {
    let registry = Registry::builtin().unwrap();
    let cases = cases();
    assert!(
        cases.len() >= 40,
        "only {} fixture cases found",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let id = format!("{}/{}", case.rule_dir, case.name);
        assert!(
            !case.meta.source.is_empty(),
            "{id}: say where the output came from"
        );
        assert!(case.meta.exit_code >= 0, "{id}: exit code");
        let compressed = registry.compress(&case.meta.command, &case.input);
        let shown = compressed.as_ref().map(|c| c.with_hint(FIXTURE_ID));
        if bless() {
            write_or_remove(&case.out_path, shown.as_deref());
            continue;
        }
        let expected = fs::read_to_string(&case.out_path).ok();
        if shown != expected {
            failures.push(format!(
                "{id}: output differs from {} (rerun with CODEOID_BLESS=1 and review the diff)",
                case.out_path.display()
            ));
            continue;
        }
        let Some(compressed) = compressed else {
            continue;
        };
        if case.rule_dir != "passthrough" {
            assert_eq!(
                compressed.rule, case.rule_dir,
                "{id}: compressed by the wrong rule"
            );
        }
        let missing = registry
            .missing_facts(&compressed.rule, &case.input, &compressed.text)
            .unwrap();
        assert!(missing.is_empty(), "{id}: facts lost: {missing:#?}");
        assert!(
            compressed.bytes_out < compressed.bytes_in,
            "{id}: compression grew the output"
        );
        assert!(
            compressed.text.is_empty() || compressed.text.ends_with('\n'),
            "{id}: text must end with a newline"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fixture_commands_select_the_rule_of_their_directory() {
    let registry = Registry::builtin().unwrap();
    for case in cases() {
        let expected = match case.rule_dir.as_str() {
            // Binary output is recognised by its bytes, whatever the command.
            BINARY_RULE => continue,
            "passthrough" if case.meta.command.contains('|') => None,
            "passthrough" => continue,
            rule => Some(rule),
        };
        assert_eq!(
            registry.rule_for(&case.meta.command),
            expected,
            "{}/{}: {:?}",
            case.rule_dir,
            case.name,
            case.meta.command
        );
    }
}

/// A test runner behind a command no rule knows (`make test`, a script) is recognised by its
/// output: every runner fixture compresses as it does under its own command.
#[test]
fn wrapped_test_runners_are_recognised_by_their_output() {
    let registry = Registry::builtin().unwrap();
    let runners = [
        "cargo-test",
        "pytest",
        "go-test",
        "jest",
        "js-test",
        "rspec",
    ];
    let mut seen = 0;
    for case in cases()
        .iter()
        .filter(|c| runners.contains(&c.rule_dir.as_str()))
    {
        let Some(direct) = registry.compress(&case.meta.command, &case.input) else {
            continue;
        };
        for wrapper in ["make test", "./scripts/run-tests.sh --ci"] {
            let at = format!("{}/{} under {wrapper:?}", case.rule_dir, case.name);
            let wrapped = registry
                .compress(wrapper, &case.input)
                .unwrap_or_else(|| panic!("{at}: not compressed"));
            // `npm test` running jest is read by the jest rule: the same drops.
            assert!(
                runners.contains(&wrapped.rule.as_str()),
                "{at}: {}",
                wrapped.rule
            );
            if wrapped.rule == direct.rule {
                assert_eq!(wrapped.text, direct.text, "{at}");
            } else {
                assert!(wrapped.kept_ratio <= direct.kept_ratio + 0.05, "{at}");
            }
        }
        seen += 1;
    }
    assert!(seen >= 12, "{seen} runner fixtures compressed");
    // Output of no runner keeps the fallback.
    let build: String = (0..200).map(|n| format!("cc -c unit{n}.c\n")).collect();
    assert_eq!(
        registry.compress("make", build.as_bytes()).unwrap().rule,
        "head-tail"
    );
}

#[test]
fn passthrough_cases_pass_through_and_others_compress() {
    let registry = Registry::builtin().unwrap();
    for case in cases().iter().filter(|c| c.rule_dir == "passthrough") {
        assert!(
            registry.compress(&case.meta.command, &case.input).is_none(),
            "passthrough/{} was compressed",
            case.name
        );
    }
}

#[test]
fn every_modified_path_of_a_large_git_status_survives() {
    let registry = Registry::builtin().unwrap();
    for name in [
        "long-with-untracked",
        "short",
        "porcelain-v2",
        "modified-only",
    ] {
        let case = cases()
            .into_iter()
            .find(|c| c.rule_dir == "git-status" && c.name == name)
            .unwrap();
        let raw = String::from_utf8(case.input.clone()).unwrap();
        let shown = registry
            .compress(&case.meta.command, &case.input)
            .map_or(raw.clone(), |c| c.text);
        let changed: Vec<&str> = raw
            .lines()
            .filter(|l| l.contains(".rs") && !l.contains(".orig") && !l.starts_with("??"))
            .collect();
        assert!(
            changed.len() >= 200,
            "{name}: only {} changed paths in the fixture",
            changed.len()
        );
        for line in changed {
            let path = line.rsplit([' ', '\t']).next().unwrap();
            assert!(shown.contains(path), "{name}: {path} was lost");
        }
    }
}

#[test]
fn every_failing_test_name_survives() {
    let registry = Registry::builtin().unwrap();
    let checks: &[(&str, &str, &str)] = &[
        ("cargo-test", "failures", "... FAILED"),
        ("pytest", "failures-verbose", " FAILED"),
        ("go-test", "failures-verbose", "--- FAIL:"),
        ("jest", "failures-verbose", "✕"),
        ("jest", "failures-vitest", "×"),
        ("js-test", "node-test-failures", "not ok "),
        ("rspec", "failures", "rspec ./spec/"),
    ];
    for (rule, name, marker) in checks {
        let case = cases()
            .into_iter()
            .find(|c| c.rule_dir == *rule && c.name == *name)
            .unwrap();
        let compressed = registry.compress(&case.meta.command, &case.input);
        let shown = compressed.map_or_else(
            || String::from_utf8_lossy(&case.input).into_owned(),
            |c| c.text,
        );
        let raw = String::from_utf8_lossy(&case.input);
        let failing: Vec<&str> = raw.lines().filter(|l| l.contains(marker)).collect();
        assert!(
            !failing.is_empty(),
            "{rule}/{name}: no {marker:?} line in the fixture"
        );
        for line in failing {
            assert!(
                shown.lines().any(|l| l == line),
                "{rule}/{name}: lost {line:?}"
            );
        }
    }
}

/// The two build-log fixtures hold their failures in the middle, where the fallback cuts: each
/// failing step's lines are shown, and so is Terraform's boxed diagnostic, edges included.
#[test]
fn errors_in_the_middle_of_real_build_logs_survive() {
    let registry = Registry::builtin().unwrap();
    let checks: &[(&str, &[&str])] = &[
        (
            "build-script",
            &[
                "./build.sh: line 14: protoc: command not found",
                "make: *** No rule to make target 'dist/app.js', needed by 'bundle'.  Stop.",
                "make[1]: *** No rule to make target 'html'.  Stop.",
                "make: *** [Makefile:20: docs] Error 2",
                "cp: cannot stat 'config/prod.yml': No such file or directory",
                "Traceback (most recent call last):",
                "FileNotFoundError: [Errno 2] No such file or directory: 'build/manifest.json'",
                "app: src/main.c:8: main: Assertion `cfg != NULL' failed.",
                "./build.sh: line 29: 20596 Aborted                 ./build/app --selftest",
                "./build.sh: line 32: 20597 Killed                  ./scripts/warm_cache.sh",
                "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to \
                 server",
                // ssh ends its message with `\r\n`; only this line does, so the `\r` is shown.
                "ssh: connect to host 127.0.0.1 port 9: Connection refused^M",
            ],
        ),
        (
            "make-terraform-plan",
            &[
                "╷\n│ Error: Reference to undeclared input variable\n│ \n│   on main.tf line 11, \
                 in resource \"terraform_data\" \"bucket\":\n│   11:     bucket = \
                 \"${var.nme}-assets\"\n│ \n│ An input variable with the name \"nme\" has not \
                 been declared. Did you mean\n│ \"name\"?\n╵\n",
                "╷\n│ Error: Unsupported argument\n│ \n│   on main.tf line 32, in resource \
                 \"terraform_data\" \"queue\":\n│   32:   timeout = \"30s\"\n│ \n│ An argument \
                 named \"timeout\" is not expected here.\n╵\n",
                "make: *** [Makefile:10: plan-app] Error 1",
            ],
        ),
    ];
    for (name, expected) in checks {
        let case = cases()
            .into_iter()
            .find(|c| c.rule_dir == "head-tail" && c.name == *name)
            .unwrap();
        let compressed = registry
            .compress(&case.meta.command, &case.input)
            .unwrap_or_else(|| panic!("head-tail/{name} was not compressed"));
        let raw = String::from_utf8_lossy(&case.input).replace('\r', "^M");
        let raw = strip_ansi(&raw);
        for text in *expected {
            assert!(
                raw.contains(text),
                "head-tail/{name}: {text:?} is not in the fixture"
            );
            assert!(
                compressed.text.contains(text),
                "head-tail/{name}: lost {text:?}"
            );
        }
        // The failures sit in the middle: the first 40 lines and the last 40 do not hold them.
        assert!(compressed.text.contains("lines elided (output lines 41–"));
    }
}

/// `text` without ANSI colour and style sequences (`ESC [ … m`), as the rules read it.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\u{1b}[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find('m').map_or(after.len(), |m| m + 1);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}
