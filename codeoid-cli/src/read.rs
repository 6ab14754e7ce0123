//! Read-only commands: `timeline`, `show`, `sessions`, `stats`, `index`.

use std::io::Write;

use anyhow::{Result, bail};
use clap::Args;
use codeoid_core::store::{MAX_TIMELINE_LIMIT, Session, TimelineQuery, iso8601};

use crate::context::Context;

/// Arguments of `codeoid timeline`.
#[derive(Debug, Args)]
pub struct TimelineArgs {
    /// Episodes per page (1..=1000; the model's timeline tool allows 60).
    /// (Signed, so that `-n -1` is told the range instead of being taken for an option.)
    #[arg(long, short = 'n', default_value_t = 20, allow_negative_numbers = true,
          value_parser = clap::value_parser!(i64).range(1..=MAX_TIMELINE_LIMIT as i64))]
    limit: i64,
    /// Episodes to skip.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = episode_count)]
    offset: u64,
    /// Start just older than this episode (stable while new episodes arrive).
    #[arg(long, value_name = "EPISODE_ID")]
    before: Option<String>,
    /// Label episodes relative to this session (`current session` / `prior session #N`).
    #[arg(long, value_name = "SESSION_ID")]
    session: Option<String>,
}

/// A count of episodes given on the command line: 0 or more, with a message saying so for a
/// negative number (which `u64`'s own parser calls an "invalid digit").
fn episode_count(text: &str) -> std::result::Result<u64, String> {
    match text.parse::<i64>() {
        Ok(n) if n < 0 => Err(format!("{n} is negative; give 0 or more episodes")),
        _ => text
            .parse::<u64>()
            .map_err(|e| format!("{text:?} is not a count of episodes ({e})")),
    }
}

pub fn timeline(context: &Context, args: &TimelineArgs) -> Result<()> {
    let memory = context.memory()?;
    let query = TimelineQuery {
        // At least 1 (checked by clap).
        offset: args.offset,
        limit: args.limit.unsigned_abs(),
        before: args.before.clone(),
    };
    write!(
        std::io::stdout().lock(),
        "{}",
        memory.timeline_text(args.session.as_deref(), &query)?
    )?;
    Ok(())
}

/// Arguments of `codeoid show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The episode to print.
    episode_id: String,
    /// Print the exact stored content bytes, nothing else.
    #[arg(long, conflicts_with = "blob")]
    raw: bool,
    /// Print a raw blob of the episode: `stdout`, `stderr` (command runs) or `content` (the
    /// whole of an oversize episode).
    #[arg(long, value_name = "ROLE")]
    blob: Option<String>,
    /// Label the episode relative to this session.
    #[arg(long, value_name = "SESSION_ID")]
    session: Option<String>,
}

pub fn show(context: &Context, args: &ShowArgs) -> Result<()> {
    let memory = context.memory()?;
    let mut out = std::io::stdout().lock();
    if let Some(role) = &args.blob {
        let episode = memory.episode(&args.episode_id)?;
        let Some(blob) = episode.blobs.iter().find(|b| &b.role == role) else {
            let roles: Vec<&str> = episode.blobs.iter().map(|b| b.role.as_str()).collect();
            bail!(
                "episode {} has no {role:?} blob; it has {}",
                args.episode_id,
                if roles.is_empty() {
                    "none".to_string()
                } else {
                    roles.join(", ")
                }
            );
        };
        out.write_all(&memory.blob(&blob.blob_id)?)?;
    } else if args.raw {
        out.write_all(memory.episode(&args.episode_id)?.content.as_bytes())?;
    } else {
        writeln!(
            out,
            "{}",
            memory.episode_text(args.session.as_deref(), &args.episode_id)?
        )?;
    }
    Ok(())
}

pub fn sessions(context: &Context) -> Result<()> {
    let memory = context.memory()?;
    let sessions = memory.sessions()?;
    let mut out = std::io::stdout().lock();
    if sessions.is_empty() {
        writeln!(
            out,
            "no sessions in workspace {} yet",
            memory.workspace().id()
        )?;
    }
    for (ordinal, session) in sessions.iter().enumerate() {
        writeln!(out, "{}", session_line(ordinal + 1, session))?;
    }
    Ok(())
}

/// One line per session: ordinal, id, name, turns, rotations, lineage.
pub fn session_line(ordinal: usize, session: &Session) -> String {
    let mut line = format!(
        "#{ordinal} {} [{}] {} turns",
        session.id,
        iso8601(session.created_at),
        session.turn_count
    );
    if let Some(name) = &session.name {
        line.push_str(&format!(" \"{name}\""));
    }
    if session.rotation_count > 0 {
        line.push_str(&format!(", rotated {}×", session.rotation_count));
    }
    if let Some(lineage) = &session.lineage {
        let at = lineage
            .at_turn
            .map_or_else(|| "the tip".to_string(), |t| format!("turn {t}"));
        let parent = lineage
            .parent_name
            .as_deref()
            .unwrap_or(&lineage.parent_session_id);
        line.push_str(&format!(", {} of {parent} at {at}", lineage.kind.as_str()));
    }
    line
}

pub fn stats(context: &Context) -> Result<()> {
    let store = context.store()?;
    let workspaces = store.workspaces()?;
    let mut out = std::io::stdout().lock();
    // Opened read-only because writing failed: no permission, a read-only mount, or a full
    // disk; which one, the open that failed knew, not the store.
    let access = if store.is_read_only() {
        " (read-only: this process cannot write it now)"
    } else {
        ""
    };
    writeln!(out, "store: {}{access}", context.db_path()?.display())?;
    if workspaces.is_empty() {
        writeln!(
            out,
            "no workspaces yet; `codeoid import <path>` records session logs"
        )?;
    }
    for ws in workspaces {
        let stats = store.workspace_stats(&ws.id)?;
        let last = stats
            .last_activity
            .map_or_else(|| "never".to_string(), iso8601);
        writeln!(
            out,
            "{}  {}  {} episodes, {} sessions, last activity {last}",
            ws.id, ws.root, stats.episodes, stats.sessions
        )?;
    }
    Ok(())
}

/// Arguments of `codeoid index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Build it as seen from this session (listed as `current`).
    #[arg(long, value_name = "SESSION_ID")]
    session: Option<String>,
    /// Seconds to wait for the embedding worker to catch up first: topic clusters are built
    /// from the episodes' vectors, as a harness's index is.
    #[arg(long, value_name = "SECONDS", default_value_t = 20)]
    wait: u64,
}

/// Prints the workspace index a harness's system prompt would carry, topic clusters included
/// (so it loads the embedding model, as `recall` does).
pub fn index(context: &Context, args: &IndexArgs) -> Result<()> {
    let memory = context.memory_for_recall()?;
    crate::recall::wait_for_vectors(&memory, std::time::Duration::from_secs(args.wait))?;
    let text = memory.workspace_index(args.session.as_deref())?;
    if text.is_empty() {
        warn!(
            "the workspace index of {} is empty (no episodes yet, or CODEOID_WORKSPACE_INDEX=0)",
            memory.workspace().id()
        );
    } else {
        writeln!(std::io::stdout().lock(), "{text}")?;
    }
    Ok(())
}
