//! The rule families: one algorithm per file, each a pure function of the command and its text.
//!
//! A family reads the normalized output ([`Input`]) and returns the compressed text, or nothing
//! when it does not recognise the output or would elide nothing. Families never touch the disk,
//! the network or the clock, never remove a fact line (see [`crate::compress::facts`]) and mark
//! every elision (see [`crate::compress::elision`]). Whether the result saves enough to be used
//! is the registry's decision, not theirs.
//!
//! [`Compiled`] is a family with its parameters parsed from a rule's `params`; unknown or
//! ill-typed parameters are an error naming the rule.

mod git_diff;
mod git_log;
mod git_status;
mod grep;
mod grep_query;
mod head_tail;
mod listing;
mod ls;
mod paths;
mod test_runner;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::config::Family;
use super::facts::Facts;
use crate::error::{Error, Result};

/// What a family reads.
pub(crate) struct Input<'a> {
    /// The command line that printed the output.
    pub(crate) command: &'a str,
    /// The normalized output.
    pub(crate) text: &'a str,
    /// `text` split into lines, without line terminators.
    pub(crate) lines: Vec<&'a str>,
    /// The fact patterns: the rule's, and those of the other rules the command line runs.
    pub(crate) facts: Facts<'a>,
}

/// A family with its parameters.
#[derive(Debug, Clone)]
pub(crate) enum Compiled {
    GitDiff(git_diff::Params),
    GitStatus(git_status::Params),
    GitLog(git_log::Params),
    TestRunner(test_runner::Compiled),
    Ls(listing::Params),
    Paths(listing::Params),
    Tree(listing::Params),
    Grep(grep::Params),
    HeadTail(head_tail::Params),
}

impl Compiled {
    /// Parses `params` for `family` on behalf of the rule `rule`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the rule when a parameter is unknown, has the
    /// wrong type, or (for patterns) does not compile.
    pub(crate) fn new(rule: &str, family: Family, params: &Map<String, Value>) -> Result<Compiled> {
        Ok(match family {
            Family::GitDiff => Compiled::GitDiff(parse(rule, family, params)?),
            Family::GitStatus => Compiled::GitStatus(parse(rule, family, params)?),
            Family::GitLog => Compiled::GitLog(parse(rule, family, params)?),
            Family::TestRunner => Compiled::TestRunner(test_runner::Compiled::new(
                rule,
                parse(rule, family, params)?,
            )?),
            Family::Ls => Compiled::Ls(parse(rule, family, params)?),
            Family::Paths => Compiled::Paths(parse(rule, family, params)?),
            Family::Tree => Compiled::Tree(parse(rule, family, params)?),
            Family::Grep => Compiled::Grep(parse(rule, family, params)?),
            Family::HeadTail => Compiled::HeadTail(parse(rule, family, params)?),
        })
    }

    /// Runs the family. `None` means "pass the output through".
    pub(crate) fn compress(&self, input: &Input<'_>) -> Option<String> {
        match self {
            Compiled::GitDiff(p) => git_diff::compress(p, input),
            Compiled::GitStatus(p) => git_status::compress(p, input),
            Compiled::GitLog(p) => git_log::compress(p, input),
            Compiled::TestRunner(c) => c.compress(input),
            Compiled::Ls(p) => ls::compress(p, input),
            Compiled::Paths(p) => paths::compress(p, input),
            Compiled::Tree(p) => paths::compress_tree(p, input),
            Compiled::Grep(p) => grep::compress(p, input),
            Compiled::HeadTail(p) => head_tail::compress(p, input),
        }
    }
}

fn parse<T: DeserializeOwned>(
    rule: &str,
    family: Family,
    params: &Map<String, Value>,
) -> Result<T> {
    serde_json::from_value(Value::Object(params.clone())).map_err(|err| {
        Error::invalid_input(format!(
            "rule {rule:?} has invalid params for family {:?}; see docs/compression.md for the \
             parameters of each family",
            family.name()
        ))
        .with_source(err)
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::compress::facts::FactSet;

    /// An [`Input`] over `text` with the given fact patterns. Leaks the fact set: fine in unit
    /// tests, and it keeps their setup to one line.
    pub(crate) fn input_for<'a>(text: &'a str, facts: &[&str]) -> Input<'a> {
        let owned: Vec<String> = facts.iter().map(|p| (*p).to_owned()).collect();
        let facts: &'static FactSet = Box::leak(Box::new(FactSet::new("test", &owned).unwrap()));
        Input {
            command: "",
            text,
            lines: text.lines().collect(),
            facts: Facts::new(vec![facts]),
        }
    }

    #[test]
    fn unknown_params_name_the_rule_and_key() {
        let params: Map<String, Value> = serde_json::from_str(r#"{"hed": 3}"#).unwrap();
        let err = Compiled::new("mine", Family::HeadTail, &params).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidInput);
        assert!(err.message().contains("\"mine\""), "{}", err.message());
        assert!(err.full_message().contains("hed"), "{}", err.full_message());
    }
}
