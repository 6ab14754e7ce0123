//! Unit tests of the chunker: every case DESIGN §1 names, pinned on exact contents.

use chrono::TimeZone;
use serde_json::json;

use super::*;
use crate::canonical::episode::PathAccess;
use crate::canonical::turn::{Image, ImageSource, Thinking, ToolCall, ToolResultPart};

const SESSION: &str = "ses_test";

/// Feeds turns one by one, each at second `seq`, round-tripping the state through JSON between
/// turns as the store does.
struct Feed {
    state: String,
    seq: u64,
    config: ChunkerConfig,
}

impl Feed {
    fn new() -> Feed {
        Feed {
            state: Chunker::new().to_state_json(),
            seq: 0,
            config: ChunkerConfig::default(),
        }
    }

    fn at(seq: u64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_700_000_000 + seq as i64, 0).unwrap()
    }

    fn push(&mut self, turn: Turn) -> Vec<Episode> {
        let mut chunker = Chunker::from_state_json(&self.state).unwrap();
        let id = format!("t{}", self.seq);
        let pos = TurnPosition {
            session_id: SESSION,
            turn_id: &id,
            seq: self.seq,
            at: Feed::at(self.seq),
        };
        let out = chunker.push(&turn, &pos, &self.config);
        self.state = chunker.to_state_json();
        self.seq += 1;
        out
    }

    fn finish(&mut self) -> Vec<Episode> {
        let mut chunker = Chunker::from_state_json(&self.state).unwrap();
        let pos = TurnPosition {
            session_id: SESSION,
            turn_id: "",
            seq: self.seq.saturating_sub(1),
            at: Feed::at(self.seq),
        };
        let out = chunker.finish(&pos);
        self.state = chunker.to_state_json();
        out
    }

    fn chunker(&self) -> Chunker {
        Chunker::from_state_json(&self.state).unwrap()
    }
}

fn call(id: &str, name: &str, input: Value) -> Part {
    Part::ToolCall(ToolCall {
        id: id.into(),
        provider_id: None,
        name: name.into(),
        input,
    })
}

fn result(id: &str, text: &str, is_error: bool) -> Part {
    Part::ToolResult(ToolResult {
        call_id: id.into(),
        parts: vec![ToolResultPart::Text { text: text.into() }],
        is_error,
    })
}

fn text(t: &str) -> Part {
    Part::Text { text: t.into() }
}

fn assistant(parts: Vec<Part>) -> Turn {
    Turn::new(Role::Assistant, parts)
}

fn user(parts: Vec<Part>) -> Turn {
    Turn::new(Role::User, parts)
}

#[test]
fn preamble_becomes_the_reasoning_of_the_first_call_with_exact_layout() {
    let mut feed = Feed::new();
    assert!(
        feed.push(Turn::user_text("Fix the  failing\ntest"))
            .is_empty()
    );
    // Claude Code writes text and tool_use as separate assistant lines of one response.
    assert!(
        feed.push(assistant(vec![text("Let me look at the test.")]))
            .is_empty()
    );
    assert!(
        feed.push(assistant(vec![call(
            "c1",
            "Read",
            json!({"file_path": "/repo/src/lib.rs"})
        )]))
        .is_empty()
    );
    let out = feed.push(user(vec![result("c1", "fn main() {}", false)]));
    assert_eq!(out.len(), 1);
    let ep = &out[0];
    assert_eq!(ep.kind, EpisodeKind::ToolCall);
    assert_eq!(ep.status, EpisodeStatus::Ok);
    assert_eq!(ep.summary, "Read(/repo/src/lib.rs)");
    assert_eq!(ep.tool_name.as_deref(), Some("Read"));
    assert_eq!(ep.call_id.as_deref(), Some("c1"));
    assert_eq!(
        ep.content,
        "# User intent\nFix the  failing\ntest\n\n# Reasoning\nLet me look at the test.\n\n\
         # Tool: Read\n\n## Input\n{\n  \"file_path\": \"/repo/src/lib.rs\"\n}\n\n\
         ## Result\nfn main() {}"
    );
    assert_eq!(ep.paths.len(), 1);
    assert_eq!(ep.paths[0].access, PathAccess::Read);
    assert_eq!(
        ep.created_at,
        Feed::at(3),
        "complete when the result arrived"
    );
    assert_eq!(ep.turn_seq, 3);
    assert_eq!(
        ep.id,
        episode_id(SESSION, "call\0t2\0c1"),
        "anchored on its turn and id"
    );
    assert!(feed.chunker().pending_call_ids().is_empty());
}

#[test]
fn several_calls_in_one_turn_each_carry_the_intent_and_their_own_reasoning() {
    let mut feed = Feed::new();
    feed.push(Turn::user_text("rename foo to bar"));
    feed.push(assistant(vec![
        text("First search."),
        call("a", "Grep", json!({"pattern": "foo"})),
        text("Then edit."),
        call("b", "Edit", json!({"file_path": "src/x.rs"})),
        call("c", "Bash", json!({"command": "cargo check"})),
    ]));
    assert_eq!(feed.chunker().pending_call_ids(), ["a", "b", "c"]);
    let out = feed.push(user(vec![
        result("b", "edited", false),
        result("a", "src/x.rs:1: foo", false),
        result("c", "ok", false),
    ]));
    let summaries: Vec<_> = out.iter().map(|e| e.summary.as_str()).collect();
    assert_eq!(
        summaries,
        ["Edit(src/x.rs)", "Grep(foo)", "Bash(cargo check)"]
    );
    for ep in &out {
        assert!(
            ep.content
                .starts_with("# User intent\nrename foo to bar\n\n"),
            "{}",
            ep.content
        );
    }
    assert!(
        out[1]
            .content
            .contains("# Reasoning\nFirst search.\n\n# Tool: Grep")
    );
    assert!(
        out[0]
            .content
            .contains("# Reasoning\nThen edit.\n\n# Tool: Edit")
    );
    assert!(!out[2].content.contains("# Reasoning"), "no text before c");
}

#[test]
fn failed_calls_keep_their_error_output() {
    let mut feed = Feed::new();
    feed.push(Turn::user_text("run the tests"));
    feed.push(assistant(vec![call(
        "x",
        "Bash",
        json!({"command": "cargo test"}),
    )]));
    let out = feed.push(user(vec![result("x", "error[E0425]: cannot find", true)]));
    assert_eq!(out[0].status, EpisodeStatus::Failed);
    assert!(
        out[0]
            .content
            .ends_with("## Result (error)\nerror[E0425]: cannot find")
    );
}

#[test]
fn final_answer_after_tools_is_an_assistant_turn() {
    let mut feed = Feed::new();
    feed.push(Turn::user_text("what does main do?"));
    feed.push(assistant(vec![call(
        "r",
        "Read",
        json!({"file_path": "main.rs"}),
    )]));
    feed.push(user(vec![result("r", "fn main() { run() }", false)]));
    feed.push(Turn::assistant_text("It calls run()."));
    // The answer is held until the exchange closes: a tool call could still follow it.
    let out = feed.push(Turn::user_text("thanks, now add a test"));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, EpisodeKind::AssistantTurn);
    assert_eq!(out[0].content, "# Assistant\nIt calls run().");
    assert_eq!(out[0].summary, "It calls run().");
    assert_eq!(out[0].created_at, Feed::at(3));
    let out = feed.finish();
    assert_eq!(out.len(), 1, "the last prompt is kept even unanswered");
    assert_eq!(out[0].kind, EpisodeKind::UserTurn);
    assert!(out[0].content.contains("(no answer recorded)"));
}

#[test]
fn a_prompt_and_its_direct_answer_are_one_user_turn() {
    let mut feed = Feed::new();
    feed.push(Turn::user_text("hello\n\n  there"));
    feed.push(assistant(vec![
        Part::Thinking(Thinking {
            text: "secret plan".into(),
            signature: None,
            redacted: false,
        }),
        text("Hi!"),
    ]));
    feed.push(Turn::assistant_text("How can I help?"));
    let out = feed.finish();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, EpisodeKind::UserTurn);
    assert_eq!(out[0].summary, "hello there");
    assert_eq!(
        out[0].content,
        "# User\nhello\n\n  there\n\n# Assistant\nHi!\n\nHow can I help?"
    );
    assert!(!out[0].content.contains("secret"), "thinking stays out");
    assert_eq!(out[0].id, episode_id(SESSION, "prompt\0t0"));
    assert!(feed.chunker().is_idle());
}

#[test]
fn thinking_goes_in_when_configured() {
    let mut feed = Feed::new();
    feed.config.include_thinking = true;
    feed.push(Turn::user_text("q"));
    feed.push(assistant(vec![Part::Thinking(Thinking {
        text: "secret plan".into(),
        signature: None,
        redacted: false,
    })]));
    let out = feed.finish();
    assert!(out[0].content.contains("secret plan"));
}

#[test]
fn pending_calls_are_cancelled_by_a_new_prompt_and_by_finish() {
    let mut feed = Feed::new();
    feed.push(Turn::user_text("build it"));
    feed.push(assistant(vec![call(
        "long",
        "Bash",
        json!({"command": "make"}),
    )]));
    let out = feed.push(Turn::user_text("stop, do something else"));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].status, EpisodeStatus::Cancelled);
    assert!(out[0].content.contains("# User intent\nbuild it"));
    assert!(out[0].content.ends_with(
        "## Result (cancelled)\nno result: a new user prompt arrived before the tool returned"
    ));
    assert_eq!(out[0].created_at, Feed::at(1), "when the call was made");

    feed.push(assistant(vec![call(
        "last",
        "Read",
        json!({"path": "a.txt"}),
    )]));
    let out = feed.finish();
    assert_eq!(out.len(), 1, "the last call of a session is stored");
    assert_eq!(out[0].status, EpisodeStatus::Cancelled);
    assert!(
        out[0]
            .content
            .contains("# User intent\nstop, do something else")
    );
    assert!(out[0].content.contains("session finished"));
    assert!(feed.chunker().is_idle());
    assert!(feed.finish().is_empty(), "finishing twice adds nothing");
}

#[test]
fn errors_are_episodes_at_once() {
    let mut feed = Feed::new();
    feed.push(Turn::user_text("go"));
    let out = feed.push(assistant(vec![Part::Error {
        message: "\nAPI error: 529 overloaded\nretrying".into(),
    }]));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, EpisodeKind::Error);
    assert_eq!(out[0].summary, "API error: 529 overloaded");
    assert_eq!(out[0].content, "\nAPI error: 529 overloaded\nretrying");
    let out = feed.push(user(vec![Part::Error {
        message: "tool crashed".into(),
    }]));
    assert_eq!(out[0].kind, EpisodeKind::Error);
    assert_eq!(out[0].id, episode_id(SESSION, &format!("error\0t2\0{}", 0)));
}

#[test]
fn compaction_summaries_are_their_own_episode_and_not_an_intent() {
    let mut feed = Feed::new();
    feed.push(Turn::user_text("refactor the store"));
    let mut summary = Turn::user_text("This session is being continued.\nSummary: ...");
    summary
        .meta
        .insert("compaction_summary".into(), json!(true));
    let out = feed.push(summary);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, EpisodeKind::Compaction);
    assert_eq!(
        out[0].content,
        "This session is being continued.\nSummary: ..."
    );
    feed.push(assistant(vec![call(
        "k",
        "Read",
        json!({"file_path": "s.rs"}),
    )]));
    let out = feed.push(user(vec![result("k", "x", false)]));
    assert!(
        out[0]
            .content
            .starts_with("# User intent\nrefactor the store\n")
    );
}

#[test]
fn results_for_unknown_calls_are_kept() {
    let mut feed = Feed::new();
    let out = feed.push(user(vec![result("ghost", "orphan output", false)]));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, EpisodeKind::ToolCall);
    assert!(out[0].content.ends_with("## Result\norphan output"));
    assert_eq!(out[0].summary, "tool result for ghost");
    assert_ne!(out[0].id, episode_id(SESSION, "call\0ghost"));
}

#[test]
fn image_results_and_prompts_get_placeholders() {
    let mut feed = Feed::new();
    feed.push(user(vec![
        text("what is this?"),
        Part::Image(Image {
            media_type: Some("image/png".into()),
            source: ImageSource::Url {
                url: "https://example.com/a.png".into(),
            },
        }),
    ]));
    let out = feed.finish();
    assert!(
        out[0]
            .content
            .starts_with("# User\nwhat is this?\n[image: image/png, https://example.com/a.png]")
    );
}

#[test]
fn corrupt_state_is_a_clear_error() {
    for state in ["{\"pending\": 3}", "{\"main\": {\"pending\": 3}}", "3"] {
        let err = Chunker::from_state_json(state).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "{state}");
        assert!(err.message().contains("chunker state"));
    }
    assert_eq!(Chunker::new().to_state_json(), "{}");
}

#[test]
fn sidechain_turns_do_not_cancel_the_main_conversation() {
    let mut feed = Feed::new();
    let side = |mut t: Turn| {
        t.meta.insert("sidechain".into(), json!(true));
        t
    };
    feed.push(Turn::user_text("review the package"));
    feed.push(assistant(vec![call(
        "task",
        "Task",
        json!({"prompt": "check package.json"}),
    )]));
    // The subagent's own conversation, interleaved in the same log.
    assert!(
        feed.push(side(Turn::user_text("check package.json")))
            .is_empty()
    );
    feed.push(side(assistant(vec![call(
        "sub",
        "Read",
        json!({"file_path": "package.json"}),
    )])));
    let out = feed.push(side(user(vec![result("sub", "{}", false)])));
    assert_eq!(out.len(), 1);
    assert!(
        out[0]
            .content
            .starts_with("# User intent\ncheck package.json\n")
    );
    feed.push(side(Turn::assistant_text("No issues.")));
    let out = feed.push(user(vec![result("task", "No issues.", false)]));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].status, EpisodeStatus::Ok);
    assert!(
        out[0]
            .content
            .starts_with("# User intent\nreview the package\n")
    );
    let out = feed.finish();
    assert_eq!(out.len(), 1, "the subagent's final answer");
    assert_eq!(out[0].kind, EpisodeKind::AssistantTurn);
    assert!(feed.chunker().is_idle());
}

#[test]
fn a_call_id_used_again_in_a_later_turn_is_a_new_episode() {
    // Per-response numbering (`call_0`) or ids synthesized per decoded response repeat.
    let mut feed = Feed::new();
    feed.push(Turn::user_text("list files"));
    feed.push(assistant(vec![call(
        "call_0",
        "Bash",
        json!({"command": "ls"}),
    )]));
    let first = feed.push(user(vec![result("call_0", "a.rs", false)]));
    feed.push(Turn::user_text("now test"));
    feed.push(assistant(vec![call(
        "call_0",
        "Bash",
        json!({"command": "cargo test"}),
    )]));
    let second = feed.push(user(vec![result("call_0", "ok", false)]));
    assert_eq!((first.len(), second.len()), (1, 1));
    assert_ne!(first[0].id, second[0].id);
    assert_eq!(second[0].summary, "Bash(cargo test)");
}

#[test]
fn a_call_pending_in_a_state_saved_before_turn_ids_keeps_its_old_anchor() {
    let mut feed = Feed::new();
    feed.push(Turn::user_text("list files"));
    feed.push(assistant(vec![call(
        "c9",
        "Bash",
        json!({"command": "ls"}),
    )]));
    assert!(feed.state.contains("\"turn_id\":\"t1\""), "{}", feed.state);
    feed.state = feed.state.replace(",\"turn_id\":\"t1\"", "");
    let out = feed.push(user(vec![result("c9", "a.rs", false)]));
    assert_eq!(out[0].id, episode_id(SESSION, "call\0c9"));
}

#[test]
fn harness_injected_text_is_a_context_episode_that_leaves_the_exchange_alone() {
    let mut feed = Feed::new();
    feed.push(Turn::user_text("fix the build"));
    feed.push(assistant(vec![
        call("a", "Edit", json!({"file_path": "lib/x.ex"})),
        call("b", "Read", json!({"file_path": "lib/y.ex"})),
    ]));
    let done = feed.push(user(vec![result("a", "edited", false)]));
    assert_eq!(done.len(), 1);
    // A hook's reminder arrives as a user message while `b` is still running.
    let mut reminder =
        Turn::user_text("<system-reminder>PostToolUse: [COMPILE ERROR]</system-reminder>");
    reminder.meta.insert("is_meta".into(), json!(true));
    let out = feed.push(reminder);
    assert_eq!(out.len(), 1, "no cancellation, no flushed prompt: {out:?}");
    assert_eq!(out[0].kind, EpisodeKind::Context);
    assert_eq!(
        out[0].content,
        "<system-reminder>PostToolUse: [COMPILE ERROR]</system-reminder>"
    );
    assert_eq!(feed.chunker().pending_call_ids(), ["b"]);
    // `b` completes normally, and the next call still carries the person's intent.
    let b = feed.push(user(vec![result("b", "defmodule Y", false)]));
    assert_eq!(b[0].status, EpisodeStatus::Ok);
    feed.push(assistant(vec![call(
        "c",
        "Bash",
        json!({"command": "mix compile"}),
    )]));
    let c = feed.push(user(vec![result("c", "ok", false)]));
    assert!(
        c[0].content.starts_with("# User intent\nfix the build\n\n"),
        "{}",
        c[0].content
    );
}

#[test]
fn a_rotation_seed_is_never_a_prompt() {
    let seed = "<rotation_context>\nThis session's backing context was just rotated. \
                Use recall, timeline and get_episode.\n</rotation_context>";
    let mut feed = Feed::new();
    feed.push(Turn::user_text("port the parser"));
    feed.push(assistant(vec![call(
        "c1",
        "Bash",
        json!({"command": "ls"}),
    )]));
    // The seed rides on the first message after the rotation: here the tool results.
    let out = feed.push(user(vec![result("c1", "parser.rs", false), text(seed)]));
    assert_eq!(out.len(), 1, "the call, and no prompt: {out:?}");
    feed.push(assistant(vec![call(
        "c2",
        "Read",
        json!({"file_path": "parser.rs"}),
    )]));
    let out = feed.push(user(vec![result("c2", "fn parse() {}", false)]));
    assert!(
        out[0]
            .content
            .starts_with("# User intent\nport the parser\n\n"),
        "{}",
        out[0].content
    );
    // On a prompt, the seed is left out of it.
    feed.push(Turn::user_text(format!("{seed}\n\nnow the lexer")));
    feed.push(assistant(vec![call(
        "c3",
        "Read",
        json!({"file_path": "lexer.rs"}),
    )]));
    let out = feed.push(user(vec![result("c3", "fn lex() {}", false)]));
    assert!(
        out[0]
            .content
            .starts_with("# User intent\nnow the lexer\n\n"),
        "{}",
        out[0].content
    );
    // Behind a reminder the harness put first, or after the prompt, the seed is left out too.
    feed.push(Turn::user_text(format!(
        "<system-reminder>tests are slow</system-reminder>\n{seed}\nand the docs\n{seed}"
    )));
    feed.push(assistant(vec![call(
        "c4",
        "Read",
        json!({"file_path": "README.md"}),
    )]));
    let out = feed.push(user(vec![result("c4", "# readme", false)]));
    assert!(
        out[0].content.starts_with(
            "# User intent\n<system-reminder>tests are slow</system-reminder>\n\nand the docs\n\n#"
        ),
        "{}",
        out[0].content
    );
}

#[test]
fn only_the_calls_after_an_exchanges_first_repeat_its_intent() {
    let mut feed = Feed::new();
    // Before any prompt there is no intent to repeat.
    feed.push(assistant(vec![call("w", "Bash", json!({"command": "ls"}))]));
    let out = feed.push(user(vec![result("w", "a.rs", false)]));
    assert!(!out[0].repeats_intent);
    // A result nobody asked for, while the prompt still waits: no call has carried it yet.
    feed.push(Turn::user_text("rename foo to bar"));
    let out = feed.push(user(vec![result("ghost1", "stray", false)]));
    assert!(!out[0].repeats_intent);
    feed.push(assistant(vec![
        text("First search."),
        call("a", "Grep", json!({"pattern": "foo"})),
        call("b", "Edit", json!({"file_path": "src/x.rs"})),
    ]));
    // The flag survives the saved state between turns, and a call in a later turn repeats too.
    assert!(
        feed.state.contains("\"repeats_intent\":true"),
        "{}",
        feed.state
    );
    feed.push(assistant(vec![call(
        "c",
        "Bash",
        json!({"command": "cargo check"}),
    )]));
    let out = feed.push(user(vec![
        result("b", "edited", false),
        result("a", "src/x.rs:1: foo", false),
        result("ghost2", "stray", false),
    ]));
    let flags: Vec<_> = out
        .iter()
        .map(|e| (e.summary.as_str(), e.repeats_intent))
        .collect();
    assert_eq!(
        flags,
        [
            ("Edit(src/x.rs)", true),
            ("Grep(foo)", false),
            ("tool result for ghost2", true)
        ]
    );
    // A new prompt starts a new exchange: its first call carries the intent first again, and
    // the call still pending is cancelled with its own flag.
    let out = feed.push(Turn::user_text("now the tests"));
    assert_eq!(
        (out[0].summary.as_str(), out[0].repeats_intent),
        ("Bash(cargo check)", true)
    );
    feed.push(assistant(vec![call(
        "d",
        "Bash",
        json!({"command": "cargo test"}),
    )]));
    let out = feed.push(user(vec![result("d", "ok", false)]));
    assert!(!out[0].repeats_intent);
    // Every other kind of episode is never flagged.
    feed.push(Turn::assistant_text("All green."));
    let out = feed.finish();
    assert_eq!(out[0].kind, EpisodeKind::AssistantTurn);
    assert!(!out[0].repeats_intent);
}

#[test]
fn a_call_pending_in_a_state_saved_before_the_repeat_flag_counts_as_first() {
    let mut feed = Feed::new();
    feed.push(Turn::user_text("list files"));
    feed.push(assistant(vec![
        call("c1", "Bash", json!({"command": "ls"})),
        call("c2", "Bash", json!({"command": "ls -a"})),
    ]));
    assert!(
        feed.state.contains(",\"repeats_intent\":true"),
        "{}",
        feed.state
    );
    feed.state = feed.state.replace(",\"repeats_intent\":true", "");
    let out = feed.push(user(vec![result("c2", "a.rs", false)]));
    assert!(!out[0].repeats_intent, "indexed whole, as before the flag");
}
