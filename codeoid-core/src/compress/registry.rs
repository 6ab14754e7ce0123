//! The rule registry: which rule applies to a command, and the compression of its output.
//!
//! A [`Registry`] is built once from a [`Config`] (built-in rules patched, disabled and extended
//! by the user's), with every pattern compiled up front, so a bad config fails at load time with
//! a message naming the rule, never halfway through a session. [`Registry::compress`] is then a
//! pure function of the command line and its stdout:
//! 1. the command is reduced to its pipelines ([`CommandShape`]); a piped one passes through
//!    unless `compress_piped` is set;
//! 2. each pipeline's command picks the first rule whose pattern matches it; when a command line
//!    runs commands that pick different rules, the `fallback` rule applies, keeping the facts of
//!    each of those rules too (`git status && git diff` keeps every changed file and diff
//!    header), and commands no rule matches leave the choice to the others (`cargo build &&
//!    cargo test` is `cargo-test`);
//! 3. output under the rule's `min_bytes` passes through, and so does NUL-delimited output
//!    (`find -print0`, `git status -z`); binary output is replaced by one line saying what it
//!    was; where the fallback applies to a command no rule knows, a rule whose `detect`
//!    patterns match a line of the output applies instead (`make test` running `pytest`) when
//!    it saves enough, else the fallback with that rule's facts;
//! 4. the rule's family runs on the normalized text ([`super::terminal`]); when it finds
//!    nothing to cut, the normalized text itself is the candidate (colour codes removed);
//! 5. the result is used only when it saves at least `min_saving` of the bytes, hint included.
//!
//! The registry never stores anything and never sees stderr: see [`super::runner`] for the
//! store-first execution path.

use regex::{Regex, RegexSet};

use super::command::CommandShape;
use super::config::{Config, Family, RuleSpec, builtin_rules};
use super::facts::{FactSet, Facts, compile};
use super::rules::{Compiled, Input};
use super::terminal::{Content, classify, normalize};
use crate::compress::elision::thousands;
use crate::error::{Error, Result};

/// The name reported for binary output.
pub const BINARY_RULE: &str = "binary";

/// Commands that pass the shape of their input through, so a piped command line still has the
/// output shape of its first stage (`git log | head -50`).
const SHAPE_PRESERVING: &[&str] = &["head", "tail", "cat", "tee", "less", "more"];

/// Compressed stdout, ready to show with [`Compressed::with_hint`].
#[derive(Debug, Clone, PartialEq)]
pub struct Compressed {
    /// The compressed text, without the hint; ends with a newline.
    pub text: String,
    /// The name of the rule that produced it.
    pub rule: String,
    /// Size of the raw stdout.
    pub bytes_in: usize,
    /// Size of [`Compressed::text`].
    pub bytes_out: usize,
    /// `bytes_out / bytes_in`.
    pub kept_ratio: f64,
}

impl Compressed {
    /// The line that tells the reader how to get the raw output back:
    /// `[codeoid: {rule} kept {x}% — get_episode("{id}") has the raw output]`.
    pub fn hint(&self, episode_id: &str) -> String {
        self.hint_via(episode_id, None)
    }

    /// [`Compressed::hint`], naming `command` (a shell command that prints the raw output when
    /// given the episode id, such as `codeoid show --blob stdout`) instead of the `get_episode`
    /// tool, for a reader that has a shell and no memory tools:
    /// `` [codeoid: {rule} kept {x}% — `{command} {id}` prints the raw output] ``.
    pub fn hint_via(&self, episode_id: &str, command: Option<&str>) -> String {
        let percent = self.kept_ratio * 100.0;
        let kept = if percent < 1.0 {
            "<1".to_owned()
        } else {
            format!("{percent:.0}")
        };
        let how = match command {
            None => format!("get_episode(\"{episode_id}\") has the raw output"),
            Some(command) => format!("`{command} {episode_id}` prints the raw output"),
        };
        format!("[codeoid: {} kept {kept}% — {how}]", self.rule)
    }

    /// The text followed by the hint line: what the model reads.
    pub fn with_hint(&self, episode_id: &str) -> String {
        self.with_hint_via(episode_id, None)
    }

    /// The text followed by [`Compressed::hint_via`]'s line.
    pub fn with_hint_via(&self, episode_id: &str, command: Option<&str>) -> String {
        let mut out = String::with_capacity(self.text.len() + 120);
        out.push_str(&self.text);
        out.push_str(&self.hint_via(episode_id, command));
        out.push('\n');
        out
    }
}

/// A summary of one rule, for listings and docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleInfo {
    /// The rule's name.
    pub name: String,
    /// Its family.
    pub family: Family,
    /// Its command patterns, as written.
    pub commands: Vec<String>,
}

#[derive(Debug)]
struct Rule {
    info: RuleInfo,
    commands: Regex,
    /// The patterns that recognise this rule's output behind an unknown command, compiled
    /// once to check them and kept as sources (multi-line mode) for the registry's set.
    detect: Vec<String>,
    facts: FactSet,
    compiled: Compiled,
    min_bytes: usize,
}

/// The ordered set of compression rules. Cheap to share: build once, use from many threads.
#[derive(Debug)]
pub struct Registry {
    rules: Vec<Rule>,
    fallback: Option<usize>,
    /// Every rule's `detect` patterns in one set, with the rule each belongs to.
    detect: Option<(RegexSet, Vec<usize>)>,
    min_saving: f64,
    compress_piped: bool,
    binary: bool,
}

/// What [`Registry::select`] decided for a command line.
enum Selection {
    /// The rule at this index; on a command line whose commands pick different rules, the
    /// fallback, with those rules (`also`) lending it their facts.
    Rule {
        index: usize,
        also: Vec<usize>,
    },
    PassThrough,
}

impl Registry {
    /// The built-in rules with default settings.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Internal`] if the built-in table is broken (a bug in codeoid).
    pub fn builtin() -> Result<Registry> {
        Registry::new(&Config::default()).map_err(|err| {
            Error::internal(format!(
                "the built-in compression rules do not load; please report it: {}",
                err.message()
            ))
        })
    }

    /// Builds a registry from `config`: built-in rules (unless `builtin_rules` is off) patched by
    /// the config's rules of the same name, the config's new rules first, disabled rules left out.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the rule when a new rule lacks `family` or
    /// `commands`, a pattern does not compile, a parameter is unknown or ill-typed, or a name in
    /// `disable` or `fallback` is not a rule.
    pub fn new(config: &Config) -> Result<Registry> {
        let mut builtins = if config.builtin_rules {
            builtin_rules()?
        } else {
            Vec::new()
        };
        let mut specs: Vec<RuleSpec> = Vec::new();
        for spec in &config.rules {
            if let Some(existing) = builtins.iter_mut().find(|b| b.name == spec.name) {
                existing.patch(spec);
            } else if specs.iter().any(|s| s.name == spec.name) {
                return Err(Error::invalid_input(format!(
                    "rule {:?} is defined twice; give each rule its own name",
                    spec.name
                )));
            } else {
                specs.push(spec.clone());
            }
        }
        specs.extend(builtins);
        for name in &config.disable {
            if !specs.iter().any(|s| &s.name == name) {
                return Err(unknown_rule("disable", name, &specs));
            }
        }
        let mut rules = Vec::with_capacity(specs.len());
        for spec in specs {
            let enabled = spec.enabled.unwrap_or(true) && !config.disable.contains(&spec.name);
            if enabled {
                rules.push(Rule::new(spec, config.min_bytes)?);
            }
        }
        let fallback = match &config.fallback {
            None => None,
            Some(name) => Some(rules.iter().position(|r| &r.info.name == name).ok_or_else(|| {
                Error::invalid_input(format!(
                    "fallback rule {name:?} is not an enabled rule; name one of the rules, or set \
                     \"fallback\": null"
                ))
            })?),
        };
        let owners: Vec<usize> = (0..rules.len())
            .flat_map(|i| std::iter::repeat_n(i, rules[i].detect.len()))
            .collect();
        let detect = if owners.is_empty() {
            None
        } else {
            let set = RegexSet::new(rules.iter().flat_map(|r| &r.detect)).map_err(|e| {
                Error::invalid_input(format!(
                    "the rules' detect patterns do not compile together: {e}; make them smaller"
                ))
            })?;
            Some((set, owners))
        };
        Ok(Registry {
            rules,
            fallback,
            detect,
            min_saving: config.min_saving,
            compress_piped: config.compress_piped,
            binary: config.binary,
        })
    }

    /// The enabled rules, in the order they are tried.
    pub fn rules(&self) -> impl Iterator<Item = &RuleInfo> {
        self.rules.iter().map(|r| &r.info)
    }

    /// The name of the rule that would compress this command's output, or `None` when its
    /// output passes through whatever it is (a piped command).
    pub fn rule_for(&self, command: &str) -> Option<&str> {
        match self.select(command) {
            Selection::Rule { index, .. } => Some(&self.rules[index].info.name),
            Selection::PassThrough => None,
        }
    }

    /// Compresses `stdout` of `command`. `None` means "show the raw output": too small, piped,
    /// not recognised, or not worth it.
    pub fn compress(&self, command: &str, stdout: &[u8]) -> Option<Compressed> {
        let Selection::Rule { index, mut also } = self.select(command) else {
            return None;
        };
        if stdout.len() < self.rules[index].min_bytes {
            return None;
        }
        match classify(stdout) {
            Content::Text => {}
            Content::NulDelimited => return None,
            Content::Binary => return self.binary.then(|| binary(stdout)),
        }
        let text = normalize(stdout);
        // A command no rule knows may run one that has a rule (`make test`, a test script):
        // that rule reads the output when it saves enough (a build log around the run may be
        // most of it), else the fallback keeps that rule's facts too.
        if Some(index) == self.fallback && also.is_empty() {
            if let Some(detected) = self.detect(&text) {
                if let Some(compressed) = self.apply(detected, &[], command, &text, stdout) {
                    return Some(compressed);
                }
                also.push(detected);
            }
        }
        self.apply(index, &also, command, &text, stdout)
    }

    /// Rule `index`, lent the facts of the rules `also`, on `text` (the normalized `stdout`);
    /// `None` when it does not save `min_saving` of the bytes.
    fn apply(
        &self,
        index: usize,
        also: &[usize],
        command: &str,
        text: &str,
        stdout: &[u8],
    ) -> Option<Compressed> {
        let rule = &self.rules[index];
        let input = Input {
            command,
            text,
            lines: text.lines().collect(),
            facts: Facts::new(
                std::iter::once(index)
                    .chain(also.iter().copied())
                    .map(|i| &self.rules[i].facts)
                    .collect(),
            ),
        };
        // When the family finds nothing to cut, the normalized text alone may still be worth
        // it: colour codes and progress redraws can be a third of the bytes.
        let body = match rule.compiled.compress(&input) {
            Some(body) => body,
            None if text.len() < stdout.len() => {
                let mut plain = text.to_owned();
                if !plain.is_empty() && !plain.ends_with('\n') {
                    plain.push('\n');
                }
                plain
            }
            None => return None,
        };
        let compressed = Compressed {
            bytes_in: stdout.len(),
            bytes_out: body.len(),
            kept_ratio: body.len() as f64 / stdout.len() as f64,
            rule: rule.info.name.clone(),
            text: body,
        };
        // An episode id is a few dozen characters; count the hint as if it had 40.
        let hinted = compressed.bytes_out + compressed.hint(&"0".repeat(40)).len() + 1;
        let worth_it = (hinted as f64) <= (1.0 - self.min_saving) * stdout.len() as f64;
        worth_it.then_some(compressed)
    }

    /// The fact lines of `stdout` (by `rule`'s patterns) that `compressed_text` lacks.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when no enabled rule has that name.
    pub fn missing_facts(
        &self,
        rule: &str,
        stdout: &[u8],
        compressed_text: &str,
    ) -> Result<Vec<String>> {
        if rule == BINARY_RULE {
            return Ok(Vec::new());
        }
        let found = self
            .rules
            .iter()
            .find(|r| r.info.name == rule)
            .ok_or_else(|| {
                Error::not_found(format!(
                    "no enabled compression rule is named {rule:?}; see Registry::rules"
                ))
            })?;
        Ok(found.facts.missing(&normalize(stdout), compressed_text))
    }

    /// The first rule whose `detect` patterns match a line of `text` (one pass over it).
    fn detect(&self, text: &str) -> Option<usize> {
        let (set, owners) = self.detect.as_ref()?;
        set.matches(text)
            .iter()
            .map(|pattern| owners[pattern])
            .min()
    }

    fn select(&self, command: &str) -> Selection {
        let shape = CommandShape::parse(command);
        let mut chosen: Vec<usize> = Vec::new();
        for pipeline in shape.substantive() {
            let stage = if pipeline.is_piped() {
                if !self.compress_piped {
                    return Selection::PassThrough;
                }
                let rest_preserves = pipeline.stages[1..]
                    .iter()
                    .all(|s| SHAPE_PRESERVING.contains(&s.split(' ').next().unwrap_or("")));
                if rest_preserves {
                    Some(pipeline.stages[0].as_str())
                } else {
                    None
                }
            } else {
                pipeline.stages.first().map(String::as_str)
            };
            // A command no rule knows (`cargo build` before `cargo test`, `echo`) leaves the
            // choice to the commands that have rules: their facts keep its errors too.
            let index =
                stage.and_then(|stage| self.rules.iter().position(|r| r.commands.is_match(stage)));
            let Some(index) = index.filter(|&i| Some(i) != self.fallback) else {
                if self.fallback.is_none() {
                    return Selection::PassThrough;
                }
                continue;
            };
            if !chosen.contains(&index) {
                chosen.push(index);
            }
        }
        match (&chosen[..], self.fallback) {
            ([one], _) => Selection::Rule {
                index: *one,
                also: Vec::new(),
            },
            (_, Some(fallback)) => Selection::Rule {
                index: fallback,
                also: chosen,
            },
            (_, None) => Selection::PassThrough,
        }
    }
}

impl Rule {
    fn new(spec: RuleSpec, default_min_bytes: usize) -> Result<Rule> {
        let name = spec.name;
        let family = spec.family.ok_or_else(|| missing_key(&name, "family"))?;
        let commands = spec
            .commands
            .ok_or_else(|| missing_key(&name, "commands"))?;
        if commands.is_empty() {
            return Err(missing_key(&name, "commands"));
        }
        // Compile each pattern alone first so an error names the pattern as written.
        for command in &commands {
            compile(&name, "command", command)?;
        }
        let joined: Vec<String> = commands.iter().map(|c| format!("(?:{c})")).collect();
        let matcher = compile(&name, "command", &joined.join("|"))?;
        let facts = FactSet::new(&name, spec.facts.as_deref().unwrap_or_default())?;
        let detect = spec
            .detect
            .iter()
            .flatten()
            .map(|pattern| {
                compile(&name, "detect", pattern).map(|re| format!("(?m){}", re.as_str()))
            })
            .collect::<Result<Vec<String>>>()?;
        let compiled = Compiled::new(&name, family, &spec.params)?;
        Ok(Rule {
            info: RuleInfo {
                name,
                family,
                commands,
            },
            commands: matcher,
            detect,
            facts,
            compiled,
            min_bytes: spec.min_bytes.unwrap_or(default_min_bytes),
        })
    }
}

fn missing_key(rule: &str, key: &str) -> Error {
    Error::invalid_input(format!(
        "rule {rule:?} has no {key:?}; a new rule needs \"family\" and \"commands\" (or use the \
         name of a built-in rule to patch it)"
    ))
}

fn unknown_rule(setting: &str, name: &str, specs: &[RuleSpec]) -> Error {
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    Error::invalid_input(format!(
        "{setting} names rule {name:?}, which does not exist; the rules are {}",
        names.join(", ")
    ))
}

fn binary(stdout: &[u8]) -> Compressed {
    let text = format!(
        "[codeoid: {} bytes of binary output elided]\n",
        thousands(stdout.len())
    );
    Compressed {
        bytes_in: stdout.len(),
        bytes_out: text.len(),
        kept_ratio: text.len() as f64 / stdout.len() as f64,
        rule: BINARY_RULE.to_owned(),
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Registry>();
        shareable::<Compressed>();
    }

    #[test]
    fn the_hint_names_rule_ratio_and_episode() {
        let compressed = Compressed {
            text: "kept\n".to_owned(),
            rule: "cargo-test".to_owned(),
            bytes_in: 1000,
            bytes_out: 123,
            kept_ratio: 0.123,
        };
        assert_eq!(
            compressed.with_hint("ep_42"),
            "kept\n[codeoid: cargo-test kept 12% — get_episode(\"ep_42\") has the raw output]\n"
        );
        assert_eq!(
            compressed.hint_via("ep_42", Some("codeoid show --blob stdout")),
            "[codeoid: cargo-test kept 12% — `codeoid show --blob stdout ep_42` prints the raw \
             output]"
        );
        let tiny = Compressed {
            kept_ratio: 0.004,
            ..compressed
        };
        assert!(tiny.hint("x").contains("kept <1%"));
    }

    #[test]
    fn mixed_commands_use_the_fallback_and_none_disables_it() {
        let registry = Registry::builtin().unwrap();
        assert_eq!(
            registry.rule_for("git status; cargo test"),
            Some("head-tail")
        );
        let config = Config {
            fallback: None,
            ..Config::default()
        };
        let strict = Registry::new(&config).unwrap();
        assert_eq!(strict.rule_for("git status; cargo test"), None);
        assert_eq!(
            strict.rule_for("cargo test; cargo test -p x"),
            Some("cargo-test")
        );
    }
}
