//! `codeoid quickstart`: the one command a new user runs. It imports the agent logs this machine
//! has (Claude Code, Codex CLI), or records a small demo session when there are none, then shows
//! what memory holds: counts, the workspace index, a recall with its four signals, the timeline, an episode, a compressed command
//! output and a rotation decision.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use codeoid_core::compress::claude_hook::shell_words;
use codeoid_core::retrieve::RecallQuery;
use codeoid_core::store::{TimelineQuery, Workspace, WorkspaceSource};
use codeoid_core::{Memory, MemoryConfig};

use crate::context::Context;
use crate::{demo, lineage, recall};

/// Arguments of `codeoid quickstart`.
#[derive(Debug, Args)]
pub struct QuickstartArgs {
    /// Record the demo session even when real logs exist.
    #[arg(long)]
    demo: bool,
}

pub fn quickstart(context: &Context, args: &QuickstartArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let db = context.db_path()?;
    writeln!(
        out,
        "codeoid {} — store: {}\n",
        env!("CARGO_PKG_VERSION"),
        db.display()
    )?;
    let store = context.store()?;
    let sources = if args.demo { Vec::new() } else { log_sources() };
    let mut imported = false;
    for source in &sources {
        writeln!(out, "importing {}", source.display())?;
        let memory = context.memory()?;
        let summary = lineage::import_with_progress(&memory, source, None, 600)?;
        lineage::print_summary(&mut out, &summary)?;
        imported |=
            summary.sessions_new + summary.sessions_updated + summary.sessions_unchanged > 0;
    }
    let (memory, session) = if imported {
        // Show the busiest workspace the import filled.
        let busiest = store
            .workspaces()?
            .into_iter()
            .map(|w| Ok((store.workspace_stats(&w.id)?.episodes, w)))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .max_by_key(|(episodes, _)| *episodes)
            .map(|(_, w)| w);
        let Some(record) = busiest else {
            anyhow::bail!("the import stored no workspace");
        };
        let workspace = Workspace::from_parts(
            &record.tenant,
            &record.key,
            &record.root,
            WorkspaceSource::Directory,
        );
        let memory = Memory::for_workspace(store.clone(), workspace, MemoryConfig::from_env()?)?;
        let session = memory.sessions()?.last().map(|s| s.id.clone());
        (memory, session)
    } else {
        let dir = demo::workspace_dir(&db);
        demo::write_workspace(&dir)?;
        writeln!(
            out,
            "no agent logs found on this machine; recording a demo session in {}",
            dir.display()
        )?;
        let config = MemoryConfig {
            workspace_dir: Some(dir),
            ..MemoryConfig::from_env()?
        };
        let memory = Memory::with_store(store.clone(), config)?;
        demo::record(&memory)?;
        (memory, Some(demo::SESSIONS[1].to_string()))
    };
    show(&mut out, &memory, session.as_deref())?;
    writeln!(out, "\n{}", next_steps(context, &memory)?)?;
    Ok(())
}

/// The commands to try next, with the options that reach what was just shown: `--db` when it
/// was given, and `--workspace` for the reads when the workspace shown (the demo's, or the
/// busiest one imported) is not the one this directory selects. `import` and `run` work where
/// they are started.
fn next_steps(context: &Context, shown: &Memory) -> Result<String> {
    let db = context.db_args()?;
    let mut reads = db.clone();
    if context.memory()?.workspace().id() != shown.workspace().id() {
        let root = shown.workspace().root().to_string_lossy().into_owned();
        reads.extend(["--workspace".to_owned(), root]);
    }
    let codeoid = |options: &[String]| {
        let words: Vec<&str> = std::iter::once("codeoid")
            .chain(options.iter().map(String::as_str))
            .collect();
        shell_words(&words)
    };
    let (db, reads) = (codeoid(&db), codeoid(&reads));
    Ok(format!(
        "next: `{db} import ~/.claude/projects`, `{reads} timeline`, `{reads} recall <query>`, \
         `{reads} show <episode_id>`, `{db} run -- 'cargo test'`"
    ))
}

/// What a model finds when it recalls a question about earlier work.
fn recall_demo(out: &mut dyn Write, memory: &Memory, session: Option<&str>) -> Result<()> {
    const QUESTION: &str = "why did the tests fail";
    recall::wait_for_vectors(memory, Duration::from_secs(60))?;
    let mut query = RecallQuery::new(QUESTION).limit(5);
    query.include_current_session = true;
    let hits = memory.recall(session, &query)?;
    writeln!(
        out,
        "\n── recall({QUESTION:?}): score = weighted vec + bm25 + recency + path ──"
    )?;
    if hits.is_empty() {
        writeln!(out, "(nothing matches)")?;
    }
    for hit in &hits {
        writeln!(out, "{}", recall::score_line(hit))?;
    }
    Ok(())
}

/// Where agent harnesses keep their logs on this machine.
fn log_sources() -> Vec<PathBuf> {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return Vec::new();
    };
    [".claude/projects", ".codex/sessions"]
        .iter()
        .map(|p| home.join(p))
        .filter(|p| has_logs(p))
        .collect()
}

fn has_logs(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        path.extension().is_some_and(|x| x == "jsonl") || (path.is_dir() && has_logs(&path))
    })
}

fn show(out: &mut dyn Write, memory: &Memory, session: Option<&str>) -> Result<()> {
    let stats = memory.store().workspace_stats(memory.workspace().id())?;
    writeln!(
        out,
        "\nworkspace {} ({}): {} episodes in {} sessions\n",
        memory.workspace().id(),
        memory.workspace().root().display(),
        stats.episodes,
        stats.sessions
    )?;
    writeln!(out, "── the workspace index a system prompt carries ──")?;
    writeln!(out, "{}\n", memory.workspace_index(session)?.trim_end())?;
    writeln!(out, "── timeline (newest first) ──")?;
    let query = TimelineQuery {
        limit: 8,
        ..TimelineQuery::default()
    };
    write!(out, "{}", memory.timeline_text(session, &query)?)?;
    recall_demo(out, memory, session)?;
    let page = memory.timeline(&query)?;
    if let Some(first) = page
        .episodes
        .iter()
        .find(|e| e.kind.to_string() == "tool_call")
    {
        writeln!(out, "\n── get_episode(\"{}\"), first lines ──", first.id)?;
        let text = memory.episode_text(session, &first.id)?;
        for line in text.lines().take(14) {
            writeln!(out, "{line}")?;
        }
    }
    let output = demo::cargo_test_output(true);
    if let Some(compressed) = memory.compress("cargo test", output.as_bytes()) {
        writeln!(
            out,
            "\n── `cargo test` output compressed by rule {} ({} → {} bytes; the raw bytes stay in the store) ──",
            compressed.rule, compressed.bytes_in, compressed.bytes_out
        )?;
        writeln!(out, "{}", compressed.text)?;
    }
    if let Some(session) = session {
        let decision = memory.rotation_decision(session)?;
        writeln!(
            out,
            "\n── rotation decision for session {session} ──\n{}",
            decision.message
        )?;
    }
    Ok(())
}
