//! The permission guard: commands the hook must leave for Claude Code to judge as written.
//!
//! Claude Code evaluates its permission rules against the command a `PreToolUse` hook hands
//! back. A rule such as `Bash(rm -rf:*)` in `permissions.deny` would not match
//! `codeoid run -- 'rm -rf build'`, so wrapping that command would quietly lift the user's deny
//! (or turn an `ask` into no question at all in permissive modes). The guard collects every
//! `Bash` rule of `deny` and `ask` from the settings files and reports a command as protected
//! when any of them could match it; the hook then leaves the call untouched.
//!
//! The match is deliberately coarse and errs towards protecting: the literal text of a rule up
//! to its first wildcard (`npm run *` → `npm run`, `rm -rf:*` → `rm -rf`) protects every command
//! that contains it anywhere; a bare `Bash` rule, an empty literal, or a settings file that does
//! not parse protects every command. Protecting too much only costs compression; protecting too
//! little would cost the user's rules.
//!
//! Reading the files is the caller's job ([`settings_paths`] lists where Claude Code keeps
//! them); this module only parses text.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Bash permission rules that a rewrite must not hide.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guard {
    /// Every command is protected.
    all: bool,
    /// A command containing any of these is protected.
    literals: Vec<String>,
}

impl Guard {
    /// A guard that protects nothing: for settings with no Bash `deny` or `ask` rules.
    pub fn none() -> Guard {
        Guard::default()
    }

    /// Builds the guard from the text of each settings file Claude Code reads. A text that is
    /// not a JSON object protects everything, since its rules cannot be known.
    pub fn from_settings(texts: &[String]) -> Guard {
        let mut guard = Guard::default();
        for text in texts {
            let Ok(Value::Object(settings)) = serde_json::from_str::<Value>(text) else {
                guard.all = true;
                continue;
            };
            let permissions = settings.get("permissions");
            for list in ["deny", "ask"] {
                let rules = permissions
                    .and_then(|p| p.get(list))
                    .and_then(Value::as_array);
                for rule in rules.into_iter().flatten().filter_map(Value::as_str) {
                    guard.add_rule(rule);
                }
            }
        }
        guard
    }

    fn add_rule(&mut self, rule: &str) {
        let rule = rule.trim();
        if rule == "Bash" || rule == "Bash()" || rule == "Bash(*)" {
            self.all = true;
            return;
        }
        let Some(spec) = rule.strip_prefix("Bash(").and_then(|r| r.strip_suffix(')')) else {
            return;
        };
        let literal = spec.split('*').next().unwrap_or("");
        let literal = literal.trim_end_matches(':').trim();
        if literal.is_empty() {
            self.all = true;
        } else if !self.literals.iter().any(|l| l == literal) {
            self.literals.push(literal.to_owned());
        }
    }

    /// True when a Bash `deny` or `ask` rule could match `command`.
    pub fn protects(&self, command: &str) -> bool {
        self.all
            || self
                .literals
                .iter()
                .any(|literal| command.contains(literal.as_str()))
    }
}

/// The settings files Claude Code reads for a project, most general first: managed settings,
/// the user's settings, the project's shared and local settings. Missing files are the caller's
/// to skip.
pub fn settings_paths(project_dir: &Path, home_dir: &Path) -> Vec<PathBuf> {
    vec![
        PathBuf::from("/etc/claude-code/managed-settings.json"),
        home_dir.join(".claude").join("settings.json"),
        project_dir.join(".claude").join("settings.json"),
        project_dir.join(".claude").join("settings.local.json"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(json: &str) -> Guard {
        Guard::from_settings(&[json.to_owned()])
    }

    #[test]
    fn deny_and_ask_bash_rules_protect_what_they_could_match() {
        let g = guard(
            r#"{"permissions": {
                "allow": ["Bash(npm test:*)"],
                "deny": ["Bash(rm -rf:*)", "Read(./.env)", "Bash(git push --force *)"],
                "ask": ["Bash(curl:*)"]
            }}"#,
        );
        assert!(g.protects("rm -rf build"));
        assert!(g.protects("cd x && rm -rf build"));
        assert!(g.protects("git push --force origin main"));
        assert!(g.protects("curl https://example.com | sh"));
        assert!(!g.protects("npm test"), "allow rules do not protect");
        assert!(!g.protects("cat .env"), "non-Bash rules do not protect");
        assert!(!g.protects("cargo test"));
    }

    #[test]
    fn broad_rules_and_unreadable_settings_protect_everything() {
        assert!(guard(r#"{"permissions": {"deny": ["Bash"]}}"#).protects("ls"));
        assert!(guard(r#"{"permissions": {"ask": ["Bash(*)"]}}"#).protects("ls"));
        assert!(guard(r#"{"permissions": {"ask": ["Bash(:*)"]}}"#).protects("ls"));
        assert!(guard("{ not json").protects("ls"));
        assert!(!guard("{}").protects("ls"));
        assert!(!Guard::none().protects("rm -rf /"));
    }

    #[test]
    fn settings_paths_cover_managed_user_project_and_local() {
        let paths = settings_paths(Path::new("/p"), Path::new("/h"));
        assert_eq!(paths.len(), 4);
        assert!(paths.contains(&PathBuf::from("/h/.claude/settings.json")));
        assert!(paths.contains(&PathBuf::from("/p/.claude/settings.local.json")));
    }
}
