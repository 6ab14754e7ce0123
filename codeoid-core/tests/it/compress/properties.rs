//! Property tests: for every rule and random input, every line that matches the rule's fact
//! patterns is in the output; and command prefixes never change which rule a command selects.

use codeoid_core::compress::{Config, Registry};
use proptest::prelude::*;

/// A command that selects each built-in rule.
const RULE_COMMANDS: &[(&str, &str)] = &[
    ("git-diff", "git diff HEAD~3"),
    ("git-status", "git status"),
    ("git-log", "git log --stat"),
    ("cargo-test", "cargo test"),
    ("pytest", "pytest -v"),
    ("go-test", "go test -v ./..."),
    ("jest", "npx jest --verbose"),
    ("js-test", "npm test"),
    ("rspec", "rspec"),
    ("mix-test", "mix test"),
    ("tree", "tree src"),
    ("find", "find . -type f"),
    ("ls", "ls -la"),
    ("grep", "grep -rn foo ."),
    ("cat", "cat big.log"),
    ("head-tail", "make"),
];

/// Lines in the shapes the rules parse and protect, with random parts.
fn shaped_line() -> impl Strategy<Value = String> {
    let word = "[a-z_]{1,12}";
    let path = "[a-z]{1,6}(/[a-z]{1,6}){0,3}\\.(rs|py|go|js|md)";
    let hash = "[0-9a-f]{40}";
    prop_oneof![
        (word, word).prop_map(|(a, b)| format!("test {a}::{b} ... ok")),
        (word, word).prop_map(|(a, b)| format!("test {a}::{b} ... FAILED")),
        word.prop_map(|a| format!("---- {a} stdout ----")),
        (word, path).prop_map(|(a, p)| format!("{p}::{a} PASSED                [ 10%]")),
        (word, path).prop_map(|(a, p)| format!("FAILED {p}::{a} - AssertionError")),
        word.prop_map(|a| format!("=== RUN   Test{a}")),
        word.prop_map(|a| format!("--- PASS: Test{a} (0.00s)")),
        word.prop_map(|a| format!("    --- FAIL: Test{a} (0.01s)")),
        word.prop_map(|a| format!("  ✓ {a} works (3 ms)")),
        word.prop_map(|a| format!("  ✕ {a} breaks (3 ms)")),
        word.prop_map(|a| format!("error[E0308]: mismatched {a}")),
        word.prop_map(|a| format!("warning: unused variable: `{a}`")),
        word.prop_map(|a| format!("2024-01-01 [ERROR] {a} failed")),
        hash.prop_map(|h| format!("commit {h}")),
        hash.prop_map(|h| format!("commit {h} (HEAD -> main)")),
        Just("Author: A <a@example.com>".to_owned()),
        word.prop_map(|a| format!("    {a} the thing")),
        path.prop_map(|p| format!("diff --git a/{p} b/{p}")),
        path.prop_map(|p| format!("+++ b/{p}")),
        Just("@@ -1,7 +1,9 @@ fn main()".to_owned()),
        word.prop_map(|a| format!("+    let {a} = 1;")),
        word.prop_map(|a| format!("-    let {a} = 2;")),
        word.prop_map(|a| format!("     {a}();")),
        path.prop_map(|p| format!("\tmodified:   {p}")),
        path.prop_map(|p| format!("\tnew file:   {p}")),
        path.prop_map(|p| format!(" M {p}")),
        path.prop_map(|p| format!("?? {p}")),
        path.prop_map(|p| format!("\t{p}")),
        Just("Untracked files:".to_owned()),
        Just("Changes not staged for commit:".to_owned()),
        Just("  (use \"git add <file>...\" to update what will be committed)".to_owned()),
        (path, 1..500u32, word).prop_map(|(p, n, a)| format!("{p}:{n}:    fn {a}()")),
        path.prop_map(|p| format!("./{p}")),
        word.prop_map(|a| format!("├── {a}.rs")),
        word.prop_map(|a| format!("│\u{a0}\u{a0} └── {a}.rs")),
        word.prop_map(|a| format!("-rw-r--r-- 1 u g 1234 Jan  1 12:00 {a}.txt")),
        Just("drwxr-xr-x 2 u g 4096 Jan  1 12:00 dir".to_owned()),
        Just(String::new()),
        Just("........F.....*....".to_owned()),
        Just("  1) test fails (ModuleTest)".to_owned()),
        Just("ok 3 - passes".to_owned()),
        Just("  ...".to_owned()),
    ]
}

/// Any line: shaped, random printable text, random Unicode, or wrapped in colour codes.
fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => shaped_line(),
        2 => "[ -~\t]{0,100}",
        1 => any::<String>().prop_map(|s| s.replace(['\n', '\r'], " ")),
        1 => shaped_line().prop_map(|l| format!("\u{1b}[1;31m{l}\u{1b}[0m")),
    ]
}

/// A registry that compresses whenever a rule returns something, so the property sees every
/// rule's output rather than only the outputs worth using.
fn eager_registry() -> Registry {
    let config = Config {
        min_bytes: 0,
        min_saving: 0.0,
        ..Config::default()
    };
    Registry::new(&config).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_fact_line_survives_every_rule(lines in prop::collection::vec(any_line(), 0..400)) {
        let registry = eager_registry();
        let input = lines.join("\n");
        for (rule, command) in RULE_COMMANDS {
            prop_assert_eq!(registry.rule_for(command), Some(*rule));
            if let Some(compressed) = registry.compress(command, input.as_bytes()) {
                // Behind `make`, a test runner's output may be recognised and read by its rule.
                let used = compressed.rule.as_str();
                prop_assert!(used == *rule || *rule == "head-tail", "{} used {}", rule, used);
                for checked in [*rule, used] {
                    let missing = registry.missing_facts(checked, input.as_bytes(), &compressed.text).unwrap();
                    prop_assert!(missing.is_empty(), "{} ({}) lost {:?}", rule, checked, missing);
                }
                prop_assert!(!compressed.text.contains('\x1b'), "colour codes in {}", rule);
            }
        }
    }

    #[test]
    fn prefixes_never_change_the_selected_rule(
        cd in prop::option::of("[a-z]{1,8}(/[a-z]{1,8}){0,2}"),
        vars in prop::collection::vec(("[A-Z_]{1,8}", "[a-z0-9]{0,6}"), 0..3),
        env in any::<bool>(),
        time in any::<bool>(),
        sudo in any::<bool>(),
        redirect in prop::sample::select(vec!["", " 2>&1", " >out.txt 2>&1", " 2>/dev/null"]),
        which in 0..RULE_COMMANDS.len(),
    ) {
        let registry = Registry::builtin().unwrap();
        let (rule, command) = RULE_COMMANDS[which];
        let mut line = String::new();
        if let Some(dir) = cd {
            line.push_str(&format!("cd {dir} && "));
        }
        if sudo {
            line.push_str("sudo -E ");
        }
        if time {
            line.push_str("time ");
        }
        if env {
            line.push_str("env ");
        }
        for (name, value) in &vars {
            line.push_str(&format!("{name}={value} "));
        }
        line.push_str(command);
        line.push_str(redirect);
        prop_assert_eq!(registry.rule_for(&line), Some(rule), "{}", line);
    }
}
