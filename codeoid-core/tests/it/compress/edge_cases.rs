//! Edge cases that fixtures cannot hold: huge generated output, counts that must add up, command
//! prefixes, and user configuration.

use codeoid_core::ErrorKind;
use codeoid_core::compress::{BINARY_RULE, Config, Registry};

use super::golden::cases;

/// The counts in `[codeoid: N what elided]` markers whose `what` contains `kind`, summed.
fn elided(text: &str, kind: &str) -> usize {
    let mut total = 0;
    for marker in text.split("[codeoid: ").skip(1) {
        let Some(body) = marker.split(" elided").next() else {
            continue;
        };
        for part in body.split(", ") {
            let Some((count, what)) = part.split_once(' ') else {
                continue;
            };
            if what.contains(kind) {
                total += count.replace(',', "").parse::<usize>().unwrap_or(0);
            }
        }
    }
    total
}

#[test]
fn fifty_megabytes_of_test_output_keep_every_failure() {
    let registry = Registry::builtin().unwrap();
    let mut out = String::from("running 1200000 tests\n");
    let mut n = 0usize;
    while out.len() < 50 * 1024 * 1024 {
        n += 1;
        if n % 250_000 == 0 {
            out.push_str(&format!("test big::case_{n} ... FAILED\n"));
        } else {
            out.push_str(&format!("test big::case_{n} ... ok\n"));
        }
    }
    out.push_str("\nfailures:\n    big::case_250000\n\ntest result: FAILED. 0 passed; 4 failed\n");
    let compressed = registry.compress("cargo test", out.as_bytes()).unwrap();
    assert_eq!(compressed.rule, "cargo-test");
    assert!(
        compressed.bytes_out < 4096,
        "{} bytes kept",
        compressed.bytes_out
    );
    for k in 1..=n / 250_000 {
        let line = format!("test big::case_{} ... FAILED", k * 250_000);
        assert!(compressed.text.lines().any(|l| l == line), "lost {line}");
    }
    let passing = out.lines().filter(|l| l.ends_with("... ok")).count();
    assert_eq!(elided(&compressed.text, "passing tests"), passing);
    let missing = registry
        .missing_facts("cargo-test", out.as_bytes(), &compressed.text)
        .unwrap();
    assert!(missing.is_empty(), "{missing:?}");
}

#[test]
fn fifty_megabytes_of_unknown_output_keep_head_tail_and_errors() {
    let registry = Registry::builtin().unwrap();
    let mut out = String::new();
    let mut n = 0usize;
    while out.len() < 50 * 1024 * 1024 {
        n += 1;
        out.push_str(&n.to_string());
        out.push('\n');
        if n == 3_000_000 {
            out.push_str("ERROR: disk quota exceeded at 3000000\n");
        }
    }
    let compressed = registry.compress("seq 1 7000000", out.as_bytes()).unwrap();
    assert_eq!(compressed.rule, "head-tail");
    assert!(compressed.kept_ratio < 0.001, "{}", compressed.kept_ratio);
    assert!(
        compressed
            .text
            .contains("\nERROR: disk quota exceeded at 3000000\n")
    );
    assert!(compressed.text.starts_with("1\n2\n"));
    assert!(compressed.text.ends_with(&format!("{n}\n")));
    assert!(compressed.hint("ep_1").contains("kept <1%"));
}

#[test]
fn located_compiler_errors_in_the_middle_survive_the_fallback() {
    let registry = Registry::builtin().unwrap();
    let errors = [
        "src/f.ts(10,5): error TS2322: Type 'string' is not assignable to type 'number'.",
        "a.py:3: error: Incompatible return value type (got \"int\", expected \"str\")",
        "main.c:3:7: error: 'y' undeclared (first use in this function)",
        "./x.go:3:2: undefined: Foo",
        "  12:5  error  'x' is assigned a value but never used  no-unused-vars",
        "  --> src/mod7.rs:4:9",
        "  File \"/app/main.py\", line 12, in <module>",
    ];
    let filler = |from: usize| -> String {
        (from..from + 200)
            .map(|i| format!("compiling unit {i} of the project\n"))
            .collect()
    };
    let out = format!("{}{}\n{}", filler(0), errors.join("\n"), filler(200));
    for command in ["tsc -p .", "make", "cargo build"] {
        let compressed = registry.compress(command, out.as_bytes()).unwrap();
        for line in errors {
            assert!(
                compressed.text.lines().any(|l| l == line),
                "{command}: lost {line:?}"
            );
        }
        assert!(compressed.kept_ratio < 0.5, "{}", compressed.kept_ratio);
    }
}

#[test]
fn the_fallback_keeps_what_follows_an_error_not_only_its_first_line() {
    let registry = Registry::builtin().unwrap();
    let filler = |from: usize| -> String {
        (from..from + 150)
            .map(|i| format!("   Compiling unit{i} v0.1.0\n"))
            .collect()
    };
    let rustc = "error[E0308]: mismatched types\n  --> src/main.rs:10:21\n   |\n10 |     let x: \
                 String = 5;\n   |            ------   ^ expected `String`, found integer\n   |\n\
                 help: try using a conversion method: `.to_string()`\n\n";
    let go = "=== RUN   TestParse\n    parse_test.go:704: got 3 want 4\n--- FAIL: TestParse \
              (0.00s)\n";
    let python = "Traceback (most recent call last):\n  File \"/app/main.py\", line 12, in \
                  <module>\n    total = parse(rows)\nValueError: invalid literal for int() with \
                  base 10: 'x'\n";
    let out = format!(
        "{}{rustc}{}{go}{}{python}{}",
        filler(0),
        filler(150),
        filler(300),
        filler(450)
    );
    let compressed = registry.compress("make all", out.as_bytes()).unwrap();
    assert_eq!(compressed.rule, "head-tail");
    for kept in [
        "   |            ------   ^ expected `String`, found integer",
        "help: try using a conversion method: `.to_string()`",
        "    parse_test.go:704: got 3 want 4",
        "    total = parse(rows)",
        "ValueError: invalid literal for int() with base 10: 'x'",
    ] {
        assert!(
            compressed.text.lines().any(|l| l == kept),
            "lost {kept:?}: {}",
            compressed.text
        );
    }
    assert!(compressed.kept_ratio < 0.3, "{}", compressed.kept_ratio);
}

#[test]
fn repeated_lines_collapse_even_when_huge() {
    let registry = Registry::builtin().unwrap();
    let out = "warning: this line repeats\n".repeat(2_000_000);
    let compressed = registry.compress("make", out.as_bytes()).unwrap();
    assert_eq!(
        compressed.text,
        "warning: this line repeats\nwarning: this line repeats\n\
         [codeoid: 1,999,998 repeats of the line above elided]\n"
    );
}

#[test]
fn binary_output_is_replaced_by_its_size() {
    let registry = Registry::builtin().unwrap();
    let mut bytes = b"\x7fELF\x02\x01\x01\0".to_vec();
    bytes.resize(64 * 1024, 0xab);
    let compressed = registry.compress("cat /usr/bin/true", &bytes).unwrap();
    assert_eq!(compressed.rule, BINARY_RULE);
    assert_eq!(
        compressed.text,
        "[codeoid: 65,536 bytes of binary output elided]\n"
    );
}

#[test]
fn a_test_run_printing_nul_bytes_keeps_its_failure() {
    let registry = Registry::builtin().unwrap();
    let mut run =
        String::from("============ test session starts ============\ncollected 62 items\n\n");
    for n in 0..60 {
        run.push_str(&format!("test_b.py::test_case_{n} PASSED\n"));
    }
    run.push_str("test_b.py::test_frame frame: \0\0\x01\x02hello\nPASSED\n");
    run.push_str("test_b.py::test_decode FAILED\n\n=========== FAILURES ===========\n");
    run.push_str("E   AssertionError: decoder returned wrong length\n");
    run.push_str("FAILED test_b.py::test_decode - AssertionError: decoder returned wrong length\n");
    run.push_str("======= 1 failed, 61 passed in 0.12s =======\n");
    let compressed = registry
        .compress("python3 -m pytest -s -v test_b.py", run.as_bytes())
        .unwrap();
    assert_ne!(compressed.rule, BINARY_RULE, "{}", compressed.text);
    for fact in [
        "FAILED test_b.py::test_decode - AssertionError: decoder returned wrong length",
        "1 failed, 61 passed",
    ] {
        assert!(
            compressed.text.contains(fact),
            "lost {fact:?}: {}",
            compressed.text
        );
    }
    assert!(!compressed.text.contains('\0'));
}

#[test]
fn chained_commands_keep_the_facts_of_each_of_their_rules() {
    let registry = Registry::builtin().unwrap();
    let files: Vec<String> = (0..80).map(|n| format!("src/module_{n}.rs")).collect();
    let mut out = String::from(
        "On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update \
         what will be committed)\n",
    );
    for file in &files {
        out.push_str(&format!("\tmodified:   {file}\n"));
    }
    out.push_str("\nno changes added to commit (use \"git add\" and/or \"git commit -a\")\n");
    for file in &files {
        out.push_str(&format!(
            "diff --git a/{file} b/{file}\nindex 1111111..2222222 100644\n--- a/{file}\n+++ \
             b/{file}\n@@ -1,3 +1,3 @@\n fn a() {{}}\n-fn old() {{}}\n+fn new() {{}}\n fn z() {{}}\n"
        ));
    }
    let command = "git status && git diff";
    let compressed = registry.compress(command, out.as_bytes()).unwrap();
    assert_eq!(compressed.rule, "head-tail");
    for file in &files {
        let modified = format!("\tmodified:   {file}");
        let header = format!("diff --git a/{file} b/{file}");
        for fact in [&modified, &header] {
            assert!(
                compressed.text.lines().any(|l| l == fact.as_str()),
                "lost {fact:?}"
            );
        }
    }
    assert!(compressed.kept_ratio < 0.8, "{}", compressed.kept_ratio);
}

#[test]
fn a_match_far_into_a_long_line_is_shown() {
    let registry = Registry::builtin().unwrap();
    let out: String = (0..5)
        .map(|n| {
            let keys: String = (0..120).map(|k| format!("\"key{k}\": {k}, ")).collect();
            format!("conf{n}.json:{{{keys}\"needle\": true}}\n")
        })
        .collect();
    let compressed = registry
        .compress(
            "grep -rn needle conf0.json conf1.json conf2.json conf3.json conf4.json",
            out.as_bytes(),
        )
        .unwrap();
    assert_eq!(compressed.rule, "grep");
    assert_eq!(
        compressed.text.matches("\"needle\": true}").count(),
        5,
        "{}",
        compressed.text
    );
}

#[test]
fn nul_delimited_output_passes_through_whole() {
    let registry = Registry::builtin().unwrap();
    let mut status = String::from("UU src/conflict.rs\0R  src/new.rs\0src/old.rs\0");
    for n in 0..400 {
        status.push_str(&format!(" M src/module_{n}.rs\0"));
    }
    assert!(
        registry
            .compress("git status --porcelain -z", status.as_bytes())
            .is_none(),
        "the conflict and the rename must reach the model"
    );
    let found: String = (0..2000).map(|n| format!("./f{n}.txt\0")).collect();
    assert!(
        registry
            .compress("find . -print0", found.as_bytes())
            .is_none()
    );
}

#[test]
fn small_empty_and_piped_output_pass_through() {
    let registry = Registry::builtin().unwrap();
    let big = "test a ... ok\n".repeat(1000);
    assert!(registry.compress("cargo test", b"").is_none());
    assert!(
        registry
            .compress("cargo test", &big.as_bytes()[..1000])
            .is_none()
    );
    assert!(
        registry
            .compress("cargo test 2>&1 | tail -5", big.as_bytes())
            .is_none()
    );
    assert!(registry.compress("cargo test", big.as_bytes()).is_some());
}

#[test]
fn piped_output_compresses_when_configured() {
    let config = Config {
        compress_piped: true,
        ..Config::default()
    };
    let registry = Registry::new(&config).unwrap();
    let big = "test a ... ok\n".repeat(1000);
    let piped = registry
        .compress("cargo test 2>&1 | tee log.txt", big.as_bytes())
        .unwrap();
    assert_eq!(piped.rule, "cargo-test");
    let filtered = registry
        .compress("cargo test | grep -v foo", big.as_bytes())
        .unwrap();
    assert_eq!(filtered.rule, "head-tail");
}

#[test]
fn prefixes_do_not_defeat_matching() {
    let registry = Registry::builtin().unwrap();
    for (command, rule) in [
        ("cd crates/core && cargo test", "cargo-test"),
        (
            "RUST_BACKTRACE=1 CARGO_TERM_COLOR=always cargo test -p x 2>&1",
            "cargo-test",
        ),
        ("env -u HOME LANG=C git status", "git-status"),
        ("sudo -E time git --no-pager log -5", "git-log"),
        ("cd /repo && git -C sub diff HEAD~1", "git-diff"),
        ("time python3 -m pytest -x tests", "pytest"),
        ("nice -n 10 go test ./...", "go-test"),
        ("timeout 600 npx vitest run", "jest"),
        ("cd web; pnpm test", "js-test"),
        ("bundle exec rspec spec/models", "rspec"),
        ("cd app && MIX_ENV=test mix test --failed", "mix-test"),
        ("cd src && ls -la", "ls"),
        ("fd -e rs", "find"),
        ("rg -n 'fn main' .", "grep"),
        ("tail -n 200 /var/log/syslog", "file-range"),
        ("head -300 src/lib.rs", "file-range"),
        ("head --lines=300 src/lib.rs", "file-range"),
        ("sed -n '120,480p' src/lib.rs", "file-range"),
        ("sed -n 42p src/lib.rs", "file-range"),
        ("sed -ne '1,20p' src/lib.rs", "file-range"),
        ("sed -n -e 1,20p src/lib.rs", "file-range"),
        ("head --lines 50 src/lib.rs", "file-range"),
        // Not one bounded range of one file: from line 5 to the end, all of it, a pattern, a
        // file followed forever, several files, a glob, a second sed script.
        ("tail -n +5 src/lib.rs", "cat"),
        ("head src/lib.rs", "cat"),
        ("sed -n '/fn main/,/^}/p' src/main.rs", "cat"),
        ("tail -n 100 -f app.log", "cat"),
        ("tail --lines=50 --follow=name app.log", "cat"),
        ("head -n 5 a.rs b.rs", "cat"),
        ("head -n 50 src/*.rs", "cat"),
        ("head -c 100 src/lib.rs", "cat"),
        ("sed -n 1,10p -e '20,$p' src/lib.rs", "cat"),
        ("cat src/lib.rs", "cat"),
        ("make -j4", "head-tail"),
        ("git status && ls", "head-tail"),
        ("cargo build 2>&1 && cargo test 2>&1", "cargo-test"),
        ("echo start; python -m pytest -q; echo done", "pytest"),
        ("make && make install", "head-tail"),
    ] {
        assert_eq!(registry.rule_for(command), Some(rule), "{command}");
    }
}

#[test]
fn colour_codes_are_stripped_and_facts_found_through_them() {
    let registry = Registry::builtin().unwrap();
    let case = cases()
        .into_iter()
        .find(|c| c.rule_dir == "cargo-test" && c.name == "failures-color")
        .unwrap();
    assert!(case.input.contains(&0x1b), "the fixture has colour codes");
    let compressed = registry.compress(&case.meta.command, &case.input).unwrap();
    assert!(!compressed.text.contains('\u{1b}'));
    for name in ["ast::parse::tests::parse_holistic", "tests::escape_meta"] {
        assert!(
            compressed
                .text
                .contains(&format!("test {name} ... FAILED\n")),
            "{name}"
        );
    }
    let all = registry
        .missing_facts("cargo-test", &case.input, &compressed.text)
        .unwrap();
    assert!(all.is_empty(), "{all:?}");
}

#[test]
fn all_passing_runs_keep_summaries_and_counts() {
    let registry = Registry::builtin().unwrap();
    for (rule, name, pass_marker) in [
        ("cargo-test", "all-pass-with-build", "... ok"),
        ("pytest", "all-pass-verbose", " PASSED"),
        ("go-test", "all-pass-verbose", "--- PASS:"),
    ] {
        let case = cases()
            .into_iter()
            .find(|c| c.rule_dir == rule && c.name == name)
            .unwrap();
        let raw = String::from_utf8(case.input.clone()).unwrap();
        let compressed = registry.compress(&case.meta.command, &case.input).unwrap();
        let passing = raw.lines().filter(|l| l.contains(pass_marker)).count();
        assert_eq!(
            elided(&compressed.text, "passing tests"),
            passing,
            "{rule}/{name}"
        );
        assert!(
            compressed.kept_ratio < 0.4,
            "{rule}/{name}: kept {}",
            compressed.kept_ratio
        );
    }
}

#[test]
fn user_rules_are_tried_first_and_builtins_can_be_patched_or_disabled() {
    let config = Config::from_json(
        r#"{
            "disable": ["ls"],
            "rules": [
                {"name": "make-check", "family": "test_runner", "commands": ["^make +check\\b"],
                 "facts": ["@diagnostics", "^FAIL: "],
                 "params": {"drop": [{"pattern": "^PASS: ", "what": "passing tests"}]}},
                {"name": "git-status", "params": {"untracked_keep": 1}}
            ]
        }"#,
    )
    .unwrap();
    let registry = Registry::new(&config).unwrap();
    assert_eq!(registry.rules().next().unwrap().name, "make-check");
    assert_eq!(registry.rule_for("make check"), Some("make-check"));
    assert_eq!(registry.rule_for("ls -la"), Some("head-tail"));
    let mut out = String::new();
    for n in 0..200 {
        out.push_str(&format!("PASS: t{n}\n"));
    }
    out.push_str("FAIL: t200\n");
    let compressed = registry.compress("make check", out.as_bytes()).unwrap();
    assert_eq!(
        compressed.text,
        "[codeoid: 200 passing tests elided]\nFAIL: t200\n"
    );
    let status = format!("?? a.txt\n{}", "?? b.txt\n".repeat(200));
    let compressed = registry
        .compress("git status -s", status.as_bytes())
        .unwrap();
    assert!(
        compressed
            .text
            .starts_with("?? a.txt\n[codeoid: 200 more untracked paths elided")
    );
}

#[test]
fn bad_configs_fail_at_load_with_the_rule_named() {
    let cases = [
        (
            r#"{"rules":[{"name":"x","family":"grep"}]}"#,
            "\"x\" has no \"commands\"",
        ),
        (
            r#"{"rules":[{"name":"x","commands":["^x"]}]}"#,
            "\"x\" has no \"family\"",
        ),
        (
            r#"{"rules":[{"name":"x","family":"grep","commands":["("]}]}"#,
            "invalid command pattern \"(\"",
        ),
        (
            r#"{"rules":[{"name":"ls","params":{"per_directory":3}}]}"#,
            "\"ls\" has invalid params",
        ),
        (
            r#"{"rules":[{"name":"cargo-test","detect":["[a-"]}]}"#,
            "invalid detect pattern \"[a-\"",
        ),
        (r#"{"disable":["nope"]}"#, "disable names rule \"nope\""),
        (r#"{"fallback":"nope"}"#, "fallback rule \"nope\""),
        (
            r#"{"rules":[{"name":"x","family":"grep","commands":["a"]},{"name":"x","family":"grep","commands":["b"]}]}"#,
            "\"x\" is defined twice",
        ),
    ];
    for (json, expected) in cases {
        let err = Config::from_json(json)
            .and_then(|c| Registry::new(&c))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{json}");
        assert!(
            err.message().contains(expected),
            "{json}: {}",
            err.message()
        );
        assert!(
            err.message().contains(';'),
            "{json}: no hint in {}",
            err.message()
        );
    }
}
