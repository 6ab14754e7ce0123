//! The history a fork hands to its target backend: the newest copied turns verbatim within a
//! token budget, the older ones left in memory and announced by a short seed, translated into the
//! backend's native format, with every translation loss reported. Pure: no store.
//!
//! Budget: a fraction ([`DEFAULT_BUDGET_FRACTION`], overridable) of the target model's context
//! window ([`crate::rotate::resolve_window`]), or an absolute number of tokens. The turns that
//! fit are chosen by [`crate::translate::fit_window`], which never separates a call from its
//! result; room for the seed is reserved first.
//!
//! Invariants:
//! - Nothing is dropped silently: when turns are left out, the seed says how many (and roughly
//!   how many tokens) and names the four memory tools that reach them; it opens the first kept
//!   user turn, after any tool results there (results must lead a user message).
//! - With nothing left out there is no seed and the turns are sent as they are.
//! - When even the smallest valid window is over budget, the handoff still holds it, with
//!   `window.fits == false`, so the caller decides.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canonical::{Part, Role, Turn, token_estimate};
use crate::error::{Error, Result};
use crate::rotate::{ContextWindow, DEFAULT_WINDOW, resolve_window};
use crate::translate::{self, Backend, Loss, LossKind, Options, ToolSpec, Translation, Window};

/// Share of the target's context window the handed-over history may fill by default: half,
/// leaving the other half for the system prompt, tool declarations, the workspace index and the
/// work ahead, and keeping a fresh fork far below the 90% auto-rotation threshold.
pub const DEFAULT_BUDGET_FRACTION: f64 = 0.5;

/// Opening tag of a fork seed.
const SEED_OPEN: &str = "<fork_context>";
/// Closing tag of a fork seed.
const SEED_CLOSE: &str = "</fork_context>";

/// How to size and translate a handoff. `Default` gives the documented defaults; serde fills
/// missing fields with them, so bindings can pass partial JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HandoffOptions {
    /// Share of the target's context window for the history, in `(0, 1]`.
    pub budget_fraction: f64,
    /// An absolute budget in tokens, instead of the fraction.
    pub budget_tokens: Option<u64>,
    /// The target model's context window in tokens, when the built-in table does not know it
    /// or is to be overridden.
    pub context_window: Option<u64>,
    /// Translation options (thinking, strictness, provider quirks).
    pub translate: Options,
}

impl Default for HandoffOptions {
    fn default() -> Self {
        HandoffOptions {
            budget_fraction: DEFAULT_BUDGET_FRACTION,
            budget_tokens: None,
            context_window: None,
            translate: Options::default(),
        }
    }
}

/// The conversation a fork hands to its target backend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Handoff {
    /// The target.
    pub backend: Backend,
    /// The target model's context window, and where its size came from.
    pub context_window: ContextWindow,
    /// Tokens the history could use.
    pub budget_tokens: u64,
    /// Which copied turns are sent (`start..`) and which are only in memory (`omitted`), with
    /// estimated tokens and whether they fit.
    pub window: Window,
    /// The announcement of the omitted turns, when there are any.
    pub seed: Option<String>,
    /// The turns as sent: the kept turns, the first one opened by the seed.
    pub turns: Vec<Turn>,
    /// `turns` in the backend's native message format (Anthropic `messages`, OpenAI Chat
    /// `messages`, OpenAI Responses `input` items, Gemini `contents`).
    pub messages: Value,
    /// What the translation could not carry unchanged.
    pub losses: Vec<Loss>,
}

impl Handoff {
    /// How many copied turns are left to memory and announced by the seed.
    pub fn omitted_turns(&self) -> usize {
        self.window.omitted.len()
    }

    /// `true` when the next request must disable extended thinking: the history ends inside a
    /// tool loop whose assistant message has no native thinking to start with (another
    /// provider's was left out), which Anthropic rejects with thinking enabled. One of
    /// [`Handoff::losses`] says so, as [`LossKind::NeedsThinkingOff`]. Forking where the tool loop
    /// has ended (after the answer that follows its last results) avoids it.
    pub fn needs_thinking_off(&self) -> bool {
        self.losses
            .iter()
            .any(|loss| loss.kind == LossKind::NeedsThinkingOff)
    }

    /// A whole request body for the backend: `system`, the handed-over turns and `tools`.
    ///
    /// # Errors
    /// As [`translate::to_request`].
    pub fn to_request(
        &self,
        system: Option<&str>,
        tools: &[ToolSpec],
        options: &Options,
    ) -> Result<Translation<Value>> {
        translate::to_request(system, &self.turns, tools, &self.backend, options)
    }
}

/// Where the handed-over conversation came from, for the seed.
#[derive(Debug, Clone, Copy)]
pub struct SeedContext<'a> {
    /// How the parent session is named (its name in quotes, or its first prompt).
    pub parent: &'a str,
    /// The parent's last copied turn.
    pub at_turn: u64,
}

/// The seed announcing `omitted` turns (about `omitted_tokens` tokens) ahead of `kept` ones.
pub fn seed_text(
    context: &SeedContext<'_>,
    backend: &Backend,
    omitted: usize,
    omitted_tokens: u64,
    kept: usize,
) -> String {
    let on = match &backend.model {
        Some(model) => format!("{} {model}", backend.provider),
        None => backend.provider.clone(),
    };
    format!(
        "{SEED_OPEN}\nThis conversation is a fork of {parent} at turn {at}, continued on {on}. \
         Its {omitted} oldest turns (about {omitted_tokens} tokens) are not repeated here; they \
         are preserved verbatim in memory, where they appear as a prior session. Retrieve on \
         demand:\n\
         \x20 - recall(query)               — semantic search across all prior episodes\n\
         \x20 - recall_file(path)           — most recent prior read of a specific file\n\
         \x20 - timeline(offset?, limit?)   — walk activity in order; each line has an episode_id\n\
         \x20 - get_episode(episode_id)     — fetch one past turn or tool result verbatim\n\
         The {kept} most recent turns follow verbatim.\n{SEED_CLOSE}",
        parent = context.parent,
        at = context.at_turn,
    )
}

fn budget(options: &HandoffOptions, window: &ContextWindow) -> Result<u64> {
    if let Some(tokens) = options.budget_tokens {
        if tokens == 0 {
            return Err(Error::invalid_input(
                "budget_tokens is 0; give the tokens the history may use, or leave it out to use \
                 a fraction of the context window",
            ));
        }
        return Ok(tokens);
    }
    let fraction = options.budget_fraction;
    if !(fraction > 0.0 && fraction <= 1.0) {
        return Err(Error::invalid_input(format!(
            "budget_fraction {fraction} is out of range; use a share of the context window in \
             (0, 1], such as {DEFAULT_BUDGET_FRACTION}"
        )));
    }
    Ok(((window.tokens as f64) * fraction).floor() as u64)
}

/// `seed` opening `turn`, after the tool results that must lead it.
fn open_with(turn: &mut Turn, seed: String) {
    let at = turn
        .parts
        .iter()
        .take_while(|p| matches!(p, Part::ToolResult(_)))
        .count();
    turn.parts.insert(at, Part::Text { text: seed });
}

/// Plans the handoff of `turns` (the copied conversation, oldest first) to `backend`.
///
/// # Errors
/// - [`crate::ErrorKind::InvalidInput`] for a budget fraction outside `(0, 1]`, a zero budget, a
///   context window override outside the accepted range, or turns the translator rejects
///   (duplicated call ids...).
/// - [`crate::ErrorKind::Translation`] with [`Options::strict`] when anything would be lost.
pub fn plan(
    turns: &[Turn],
    backend: &Backend,
    context: &SeedContext<'_>,
    options: &HandoffOptions,
) -> Result<Handoff> {
    let context_window = resolve_window(
        backend.model.as_deref(),
        options.context_window,
        DEFAULT_WINDOW,
    )?;
    let budget_tokens = budget(options, &context_window)?;
    // Room for the seed at its longest (every turn omitted), so the window can use the rest.
    let total = translate::fit_window(turns, backend, &options.translate, u64::MAX).kept_tokens;
    let reserve = token_estimate(&seed_text(
        context,
        backend,
        turns.len(),
        total,
        turns.len(),
    ));
    let window = translate::fit_window(
        turns,
        backend,
        &options.translate,
        budget_tokens.saturating_sub(reserve),
    );
    let mut sent: Vec<Turn> = turns[window.start..].to_vec();
    let seed = (window.start > 0).then(|| {
        seed_text(
            context,
            backend,
            window.start,
            window.omitted_tokens,
            sent.len(),
        )
    });
    if let Some(seed) = &seed {
        match sent.first_mut() {
            Some(first) if first.role == Role::User => open_with(first, seed.clone()),
            // A window starts at a user turn whenever it leaves turns out; stay correct anyway.
            _ => sent.insert(0, Turn::user_text(seed.clone())),
        }
    }
    let translated = translate::to_messages(&sent, backend, &options.translate)?;
    Ok(Handoff {
        backend: backend.clone(),
        context_window,
        budget_tokens,
        window,
        seed,
        turns: sent,
        messages: translated.value,
        losses: translated.losses,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::{ToolCall, ToolResult, ToolResultPart};
    use crate::translate::Format;
    use serde_json::json;

    fn exchange(n: usize, output: &str) -> Vec<Turn> {
        let id = format!("call_{n}");
        vec![
            Turn::user_text(format!("step {n}")),
            Turn::new(
                Role::Assistant,
                vec![Part::ToolCall(ToolCall {
                    id: id.clone(),
                    provider_id: None,
                    name: "Read".into(),
                    input: json!({"file_path": format!("f{n}.rs")}),
                })],
            ),
            Turn::new(
                Role::User,
                vec![Part::ToolResult(ToolResult {
                    call_id: id,
                    parts: vec![ToolResultPart::Text {
                        text: output.into(),
                    }],
                    is_error: false,
                })],
            ),
            Turn::assistant_text(format!("done {n}")),
        ]
    }

    const CONTEXT: SeedContext<'static> = SeedContext {
        parent: "\"main\"",
        at_turn: 39,
    };

    #[test]
    fn a_small_history_goes_whole_without_a_seed() {
        let turns: Vec<Turn> = (0..3).flat_map(|n| exchange(n, "ok")).collect();
        let backend = Backend::new(Format::Gemini).with_model("gemini-2.5-pro");
        let handoff = plan(&turns, &backend, &CONTEXT, &HandoffOptions::default()).unwrap();
        assert_eq!(handoff.context_window.tokens, 1_048_576);
        assert_eq!(handoff.budget_tokens, 524_288);
        assert_eq!((handoff.omitted_turns(), handoff.seed.as_ref()), (0, None));
        assert_eq!(handoff.turns, turns);
        assert_eq!(handoff.messages.as_array().unwrap().len(), turns.len());
    }

    #[test]
    fn older_turns_are_announced_never_dropped_silently() {
        let big = "x".repeat(40_000);
        let turns: Vec<Turn> = (0..10).flat_map(|n| exchange(n, &big)).collect();
        let backend = Backend::new(Format::OpenaiChat).with_model("gpt-4o");
        let options = HandoffOptions {
            budget_tokens: Some(35_000),
            ..HandoffOptions::default()
        };
        let handoff = plan(&turns, &backend, &CONTEXT, &options).unwrap();
        assert!(handoff.window.fits);
        let omitted = handoff.omitted_turns();
        assert!(
            omitted > 0 && omitted % 4 == 0,
            "cut at a prompt: {omitted}"
        );
        assert_eq!(handoff.turns.len(), turns.len() - omitted);
        let seed = handoff.seed.clone().unwrap();
        assert!(seed.starts_with(SEED_OPEN) && seed.ends_with(SEED_CLOSE));
        for needle in [
            "recall(query)",
            "recall_file(path)",
            "timeline(offset?, limit?)",
            "get_episode(episode_id)",
            &format!("Its {omitted} oldest turns"),
            "fork of \"main\" at turn 39",
            "openai gpt-4o",
        ] {
            assert!(seed.contains(needle), "{needle:?} missing from {seed}");
        }
        // The seed opens the first kept prompt, which is still the prompt.
        let first = &handoff.turns[0];
        assert_eq!(first.parts[0], Part::Text { text: seed.clone() });
        assert_eq!(first.parts[1], turns[omitted].parts[0]);
        assert!(handoff.window.kept_tokens + token_estimate(&handoff.turns[0].text()) <= 35_000);
        let messages = handoff.messages.as_array().unwrap();
        assert_eq!(messages[0]["role"], "user");
        // Two text parts: the seed, then the prompt.
        assert_eq!(
            messages[0]["content"][0]["text"].as_str(),
            Some(seed.as_str())
        );
        assert_eq!(messages[0]["content"][1]["text"], turns[omitted].text());
    }

    #[test]
    fn an_oversize_tail_is_returned_flagged_as_not_fitting() {
        let turns = exchange(0, &"y".repeat(400_000));
        let backend = Backend::new(Format::Anthropic).with_model("claude-sonnet-4-5");
        let options = HandoffOptions {
            budget_tokens: Some(2_000),
            ..HandoffOptions::default()
        };
        let handoff = plan(&turns, &backend, &CONTEXT, &options).unwrap();
        assert!(!handoff.window.fits);
        assert_eq!(
            handoff.turns, turns,
            "the smallest valid window is the whole exchange"
        );
    }

    #[test]
    fn a_seed_goes_after_results_that_lead_a_turn() {
        let mut turn = Turn::new(
            Role::User,
            vec![
                Part::ToolResult(ToolResult {
                    call_id: "c".into(),
                    parts: vec![],
                    is_error: false,
                }),
                Part::Text {
                    text: "and now".into(),
                },
            ],
        );
        open_with(&mut turn, "seed".into());
        assert!(matches!(turn.parts[0], Part::ToolResult(_)));
        assert_eq!(
            turn.parts[1],
            Part::Text {
                text: "seed".into()
            }
        );
    }

    #[test]
    fn options_deserialize_from_partial_json() {
        let options: crate::fork::ForkOptions =
            serde_json::from_str(r#"{"handoff": {"budget_fraction": 0.25}}"#).unwrap();
        assert_eq!(options.handoff.budget_fraction, 0.25);
        assert_eq!(options.handoff.budget_tokens, None);
        assert!(options.handoff.translate.gemini_call_ids);
        assert_eq!(options.id, None);
    }

    #[test]
    fn bad_budgets_are_refused() {
        let turns = exchange(0, "ok");
        let backend = Backend::new(Format::Gemini);
        for (options, needle) in [
            (
                HandoffOptions {
                    budget_fraction: 0.0,
                    ..HandoffOptions::default()
                },
                "budget_fraction 0",
            ),
            (
                HandoffOptions {
                    budget_fraction: f64::NAN,
                    ..HandoffOptions::default()
                },
                "budget_fraction NaN",
            ),
            (
                HandoffOptions {
                    budget_fraction: 1.5,
                    ..HandoffOptions::default()
                },
                "budget_fraction 1.5",
            ),
            (
                HandoffOptions {
                    budget_tokens: Some(0),
                    ..HandoffOptions::default()
                },
                "budget_tokens is 0",
            ),
            (
                HandoffOptions {
                    context_window: Some(10),
                    ..HandoffOptions::default()
                },
                "10 tokens is too small",
            ),
        ] {
            let err = plan(&turns, &backend, &CONTEXT, &options).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidInput);
            assert!(err.message().contains(needle), "{err}");
        }
    }
}
