//! The compression config file: global thresholds and rules declared as data.
//!
//! The format is JSON, parsed with `serde_json` (already a dependency of codeoid, and the format
//! Claude Code settings use, so one tool chain edits both). Every field is optional:
//!
//! ```json
//! {
//!   "min_bytes": 1024,
//!   "min_saving": 0.2,
//!   "compress_piped": false,
//!   "fallback": "head-tail",
//!   "disable": ["ls"],
//!   "rules": [
//!     { "name": "make-check", "family": "test_runner", "commands": ["^make (?:check|test)\\b"],
//!       "facts": ["@diagnostics", "^FAIL: "],
//!       "params": { "drop": [{ "pattern": "^PASS: ", "what": "passing tests" }] } },
//!     { "name": "git-log", "params": { "head_commits": 5 } }
//!   ]
//! }
//! ```
//!
//! A rule whose name is a built-in rule's patches it: the keys it gives replace the built-in's,
//! and `params` are merged key by key. Any other rule is new: it needs `family` and `commands`,
//! and it is tried before the built-ins, in file order, so a user rule wins over a built-in one.
//! The built-in rules are themselves written in this format (`builtin_rules.json`).
//!
//! This module parses and validates shapes; compiling patterns and family parameters is the
//! registry's job, which is where their errors are reported.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};

/// The algorithm a rule runs. Its parameters are given in the rule's `params`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Family {
    /// Unified diffs (`git diff`, `git show`, `git log -p`): long context collapsed, long
    /// hunks, binary patches and lock files elided; every file header kept.
    GitDiff,
    /// `git status`, long or short format: every tracked change kept, long untracked lists
    /// elided with their count.
    GitStatus,
    /// `git log`: the newest and oldest commits in full, the ones between as hash and subject.
    GitLog,
    /// Test runners: lines matching the rule's `drop` patterns (passing tests, progress) are
    /// elided with counts; everything else, failures and summaries included, is kept.
    TestRunner,
    /// `ls`, `ls -l`, `ls -R`: long directories elided past a limit, counted by extension.
    Ls,
    /// `find`, `fd`: paths grouped by directory, long directories elided with counts.
    Paths,
    /// `tree`: the tree turned into the grouped form of [`Family::Paths`].
    Tree,
    /// `grep`, `rg`, `ag`, `ack`: matches grouped by file, long files and lines cut with counts.
    Grep,
    /// The first and last lines, with every fact line between them.
    HeadTail,
}

impl Family {
    /// The snake_case name used in config files.
    pub fn name(self) -> &'static str {
        match self {
            Family::GitDiff => "git_diff",
            Family::GitStatus => "git_status",
            Family::GitLog => "git_log",
            Family::TestRunner => "test_runner",
            Family::Ls => "ls",
            Family::Paths => "paths",
            Family::Tree => "tree",
            Family::Grep => "grep",
            Family::HeadTail => "head_tail",
        }
    }
}

/// One rule as declared in a config file. See the module docs for how a spec with a built-in
/// rule's name patches that rule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// The rule's name, shown in the hint `[codeoid: {name} kept …]`. Lowercase letters, digits
    /// and `-`.
    pub name: String,
    /// The algorithm. Required for a new rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<Family>,
    /// Regular expressions matched against each command with its prefixes peeled (see
    /// [`super::CommandShape`]). Required for a new rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<String>>,
    /// Fact patterns: lines matching one are never removed (with a capture group, only the
    /// captured text must survive); `@diagnostics` names [`super::DIAGNOSTICS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<Vec<String>>,
    /// Output patterns, one line each, that recognise this rule's output behind a command no
    /// rule knows (`make test` running `cargo test`): where the fallback would apply, the first
    /// rule with a line matching one of them applies instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detect: Option<Vec<String>>,
    /// Output below this many bytes passes through; defaults to the global `min_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_bytes: Option<usize>,
    /// `false` turns the rule off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The family's parameters; unknown keys are an error when the registry is built.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
}

impl RuleSpec {
    /// Applies `patch` (a spec with the same name) on top of this one.
    pub(crate) fn patch(&mut self, patch: &RuleSpec) {
        if patch.family.is_some() {
            self.family = patch.family;
        }
        if patch.commands.is_some() {
            self.commands.clone_from(&patch.commands);
        }
        if patch.facts.is_some() {
            self.facts.clone_from(&patch.facts);
        }
        if patch.detect.is_some() {
            self.detect.clone_from(&patch.detect);
        }
        if patch.min_bytes.is_some() {
            self.min_bytes = patch.min_bytes;
        }
        if patch.enabled.is_some() {
            self.enabled = patch.enabled;
        }
        for (key, value) in &patch.params {
            self.params.insert(key.clone(), value.clone());
        }
    }
}

/// Global settings and user rules. [`Config::default`] is the built-in behaviour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Output below this many bytes passes through unchanged (default 1024).
    pub min_bytes: usize,
    /// A rule's result is used only when it is at least this fraction smaller than the raw
    /// output, hint included (default 0.2); otherwise the output passes through.
    pub min_saving: f64,
    /// Compress commands that contain a `|` pipeline (default `false`: the agent already shaped
    /// that output).
    pub compress_piped: bool,
    /// Treat output that is not text (NUL bytes, mostly invalid UTF-8) as binary and elide it
    /// (default `true`).
    pub binary: bool,
    /// The rule used when a command line runs several commands that match different rules
    /// (default `"head-tail"`); `null` passes such output through.
    pub fallback: Option<String>,
    /// Include the built-in rules (default `true`).
    pub builtin_rules: bool,
    /// Names of rules to turn off.
    pub disable: Vec<String>,
    /// New rules and patches of built-in ones.
    pub rules: Vec<RuleSpec>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            min_bytes: 1024,
            min_saving: 0.2,
            compress_piped: false,
            binary: true,
            fallback: Some("head-tail".to_owned()),
            builtin_rules: true,
            disable: Vec::new(),
            rules: Vec::new(),
        }
    }
}

impl Config {
    /// Parses a config from JSON text.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidInput`] when the text is not JSON of this shape (the message names the
    /// line and column) or a value is out of range.
    pub fn from_json(text: &str) -> Result<Config> {
        let config: Config = serde_json::from_str(text).map_err(|err| {
            Error::invalid_input(format!(
                "invalid compression config at line {} column {}; see docs/compression.md for \
                 the format",
                err.line(),
                err.column()
            ))
            .with_source(err)
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Reads and parses a config file.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] when the file cannot be read; [`ErrorKind::InvalidInput`] (naming the
    /// file) when it is not a valid config.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|err| Error::io("read", path, err))?;
        Config::from_json(&text).map_err(|err| {
            let message = format!("{}: {}", path.display(), err.message());
            let mut wrapped = Error::new(ErrorKind::InvalidInput, message);
            if let Some(source) = std::error::Error::source(&err) {
                wrapped = wrapped.with_source(source.to_string());
            }
            wrapped
        })
    }

    fn validate(&self) -> Result<()> {
        if !(0.0..1.0).contains(&self.min_saving) {
            return Err(Error::invalid_input(format!(
                "min_saving {} is out of range; use a fraction from 0 (any saving) to just under \
                 1",
                self.min_saving
            )));
        }
        for spec in &self.rules {
            validate_name(&spec.name)?;
        }
        Ok(())
    }
}

fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_input(format!(
            "rule name {name:?} is not valid; use lowercase letters, digits and '-'"
        )))
    }
}

/// The built-in rules, in the order they are tried.
///
/// # Errors
/// [`ErrorKind::Internal`] if the embedded rule table does not parse (a bug in codeoid).
pub fn builtin_rules() -> Result<Vec<RuleSpec>> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Table {
        rules: Vec<RuleSpec>,
    }
    let table: Table = serde_json::from_str(include_str!("builtin_rules.json")).map_err(|err| {
        Error::internal("the built-in compression rule table does not parse; please report it")
            .with_source(err)
    })?;
    Ok(table.rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_object_is_the_default() {
        assert_eq!(Config::from_json("{}").unwrap(), Config::default());
    }

    #[test]
    fn unknown_keys_and_families_are_rejected_with_position() {
        let err = Config::from_json("{\n \"min_byte\": 3}").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains("line 2"), "{}", err.message());
        assert!(
            err.full_message().contains("min_byte"),
            "{}",
            err.full_message()
        );
        let err = Config::from_json(r#"{"rules":[{"name":"x","family":"nope"}]}"#).unwrap_err();
        assert!(
            err.full_message().contains("nope"),
            "{}",
            err.full_message()
        );
    }

    #[test]
    fn out_of_range_values_are_rejected() {
        let err = Config::from_json(r#"{"min_saving": 1.5}"#).unwrap_err();
        assert!(err.message().starts_with("min_saving 1.5 is out of range;"));
        let err = Config::from_json(r#"{"rules":[{"name":"Bad Name"}]}"#).unwrap_err();
        assert!(err.message().contains("\"Bad Name\""));
    }

    #[test]
    fn load_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("compress.json");
        std::fs::write(&path, "{ nope").unwrap();
        let err = Config::load(&path).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains("compress.json"), "{}", err.message());
        let err = Config::load(&dir.path().join("missing.json")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io);
    }

    #[test]
    fn patches_replace_keys_and_merge_params() {
        let mut base: RuleSpec = serde_json::from_str(
            r#"{"name":"git-log","family":"git_log","commands":["^git log"],
                "params":{"head_commits":10,"tail_commits":3}}"#,
        )
        .unwrap();
        let patch: RuleSpec =
            serde_json::from_str(r#"{"name":"git-log","params":{"head_commits":5}}"#).unwrap();
        base.patch(&patch);
        assert_eq!(base.commands.as_deref(), Some(&["^git log".to_owned()][..]));
        assert_eq!(base.params["head_commits"], 5);
        assert_eq!(base.params["tail_commits"], 3);
    }

    #[test]
    fn builtin_table_parses() {
        let rules = builtin_rules().unwrap();
        assert!(rules.iter().any(|r| r.name == "head-tail"));
        for rule in &rules {
            validate_name(&rule.name).unwrap();
            assert!(
                rule.family.is_some() && rule.commands.is_some(),
                "{}",
                rule.name
            );
        }
    }
}
