//! `codeoid import` (session logs into the store, with a progress bar) and `codeoid fork` (a
//! session copied into a new one, optionally handed off to another backend).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::Args;
use codeoid_core::fork::ForkOptions;
use codeoid_core::import::{ImportOptions, ImportSummary};
use codeoid_core::translate::{Backend, Format};
use indicatif::{ProgressBar, ProgressStyle};

use crate::context::Context;

/// Arguments of `codeoid import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A log file or a folder of logs (Claude Code `~/.claude/projects`, Codex
    /// `~/.codex/sessions`, Gemini CLI chats, SWE-agent `.traj`); the format is detected.
    path: PathBuf,
    /// Put every session in this directory's workspace instead of the one its log names.
    #[arg(long, value_name = "DIR")]
    into: Option<PathBuf>,
    /// Finish sessions idle for this many seconds (pending tool calls become cancelled); newer
    /// logs are treated as still being written.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    finish_after: u64,
}

pub fn import(context: &Context, args: &ImportArgs) -> Result<()> {
    // A path that cannot be imported is refused before a store is created for it.
    codeoid_core::import::check_path(&args.path)?;
    let memory = context.memory()?;
    let summary = import_with_progress(&memory, &args.path, args.into.clone(), args.finish_after)?;
    print_summary(&mut std::io::stdout().lock(), &summary)?;
    Ok(())
}

/// Imports `path` with a progress bar on stderr (hidden when stderr is not a terminal).
pub fn import_with_progress(
    memory: &codeoid_core::Memory,
    path: &std::path::Path,
    into: Option<PathBuf>,
    finish_after: u64,
) -> Result<ImportSummary> {
    let options = ImportOptions {
        workspace_dir: into,
        finish_after: Some(Duration::from_secs(finish_after)),
        ..ImportOptions::default()
    };
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let summary = memory
        .import_logs(path, &options, &mut |progress| {
            bar.set_length(progress.bytes_total);
            bar.set_position(progress.bytes_done);
            let name = progress
                .current
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            bar.set_message(format!(
                "{}/{} files {}",
                progress.files_done,
                progress.files_total,
                name.unwrap_or_default()
            ));
        })
        .with_context(|| {
            format!(
                "cannot import {} (importing again goes on from where this stopped)",
                path.display()
            )
        })?;
    bar.finish_and_clear();
    Ok(summary)
}

/// The human summary of an import.
pub fn print_summary(out: &mut dyn Write, summary: &ImportSummary) -> Result<()> {
    let report = &summary.report;
    writeln!(
        out,
        "imported {} files ({} lines): {} sessions new, {} updated, {} unchanged; {} turns added, \
         {} replaced; {} episodes added",
        report.files,
        report.lines,
        summary.sessions_new,
        summary.sessions_updated,
        summary.sessions_unchanged,
        summary.turns_added,
        summary.turns_replaced,
        summary.episodes_added
    )?;
    if summary.turns_replaced > 0 {
        // A log that differs from what was stored: the stored tail follows the log, and what
        // the old turns' episodes said is gone, so say so rather than hide it in a count.
        writeln!(
            out,
            "{} stored turns differed from their logs and were replaced; {} episodes derived from \
             the old turns were removed (the new turns' episodes are among those added)",
            summary.turns_replaced, summary.episodes_removed
        )?;
    }
    if report.files == 0 && report.skipped_files.is_empty() {
        writeln!(
            out,
            "no session logs there: import reads .jsonl, .json and .traj files (Claude Code keeps \
             them in ~/.claude/projects, Codex CLI in ~/.codex/sessions)"
        )?;
    }
    if report.malformed_lines_skipped > 0 {
        writeln!(
            out,
            "skipped {} malformed lines:",
            report.malformed_lines_skipped
        )?;
        for issue in &report.malformed {
            writeln!(out, "  {issue}")?;
        }
        print_unlisted(out, report.malformed_lines_skipped, report.malformed.len())?;
    }
    if report.warnings > 0 {
        writeln!(
            out,
            "imported {} records with a repair (they are stored; what was repaired is below):",
            report.warnings
        )?;
        for issue in &report.warning_list {
            writeln!(out, "  {issue}")?;
        }
        print_unlisted(out, report.warnings, report.warning_list.len())?;
    }
    if report.superseded_records > 0 {
        writeln!(
            out,
            "{} records were replaced or removed by later records of the same file (Gemini CLI \
             rewrites its history); the latest version is what was imported",
            report.superseded_records
        )?;
    }
    if report.unsupported_parts > 0 {
        writeln!(
            out,
            "{} content blocks have no canonical part; each is kept verbatim in its turn's \
             meta.unsupported_parts",
            report.unsupported_parts
        )?;
    }
    for skipped in &summary.skipped_sessions {
        writeln!(
            out,
            "skipped session {}: {}",
            skipped.session_id, skipped.reason
        )?;
    }
    for file in &report.skipped_files {
        writeln!(out, "skipped file {}: {}", file.path.display(), file.reason)?;
    }
    Ok(())
}

/// Says how many of `total` problems the list of `listed` left out (the report keeps the first
/// [`codeoid_core::import::MAX_LISTED_ISSUES`]).
fn print_unlisted(out: &mut dyn Write, total: u64, listed: usize) -> Result<()> {
    let unlisted = total.saturating_sub(listed as u64);
    if unlisted > 0 {
        writeln!(out, "  ... and {unlisted} more")?;
    }
    Ok(())
}

/// Arguments of `codeoid fork`.
#[derive(Debug, Args)]
pub struct ForkArgs {
    /// The session to fork.
    session: String,
    /// Name of the new session.
    #[arg(long)]
    name: String,
    /// Sequence number of the last turn to copy [default: the tip].
    #[arg(long, value_name = "TURN")]
    at: Option<u64>,
    /// Hand the conversation off to another backend: `anthropic`, `openai_chat`,
    /// `openai_responses` or `gemini`, optionally with a model (`gemini:gemini-2.5-pro`).
    #[arg(long, value_name = "FORMAT[:MODEL]")]
    to: Option<String>,
    /// Print the handoff's provider messages as JSON.
    #[arg(long, requires = "to")]
    print_messages: bool,
}

pub fn fork(context: &Context, args: &ForkArgs) -> Result<()> {
    let memory = context.memory()?;
    let target = args.to.as_deref().map(parse_backend).transpose()?;
    let forked = memory.fork(
        &args.session,
        args.at,
        target.as_ref(),
        &args.name,
        &ForkOptions::default(),
    )?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "forked into session {} ({} turns copied)",
        forked.session.id, forked.copied_turns
    )?;
    for line in codeoid_core::fork::describe_lineage(memory.store(), &forked.session.id)? {
        writeln!(out, "  {line}")?;
    }
    if let Some(handoff) = &forked.handoff {
        writeln!(
            out,
            "handoff to {}: {} turns verbatim, {} left in memory, budget {} of a {}-token window",
            handoff.backend.format,
            handoff.turns.len(),
            handoff.omitted_turns(),
            handoff.budget_tokens,
            handoff.context_window.tokens
        )?;
        for loss in &handoff.losses {
            writeln!(out, "  loss: {loss}")?;
        }
        if args.print_messages {
            writeln!(out, "{}", serde_json::to_string_pretty(&handoff.messages)?)?;
        }
    }
    Ok(())
}

fn parse_backend(spec: &str) -> Result<Backend> {
    let (format, model) = match spec.split_once(':') {
        Some((format, model)) => (format, Some(model)),
        None => (spec, None),
    };
    let mut backend = Backend::new(format.parse::<Format>()?);
    if let Some(model) = model.filter(|m| !m.is_empty()) {
        backend = backend.with_model(model);
    }
    Ok(backend)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use codeoid_core::import::{ImportReport, ImportSummary, Issue};

    use super::print_summary;

    fn printed(summary: &ImportSummary) -> String {
        let mut out = Vec::new();
        print_summary(&mut out, summary).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn repairs_superseded_records_and_unsupported_blocks_are_said() {
        let issue = |line| Issue {
            path: PathBuf::from("rollout.jsonl"),
            line: Some(line),
            pointer: None,
            reason: "timestamp \"yesterday\" is not RFC 3339; dropped".into(),
        };
        let summary = ImportSummary {
            report: ImportReport {
                files: 1,
                warnings: 3,
                warning_list: vec![issue(6), issue(9)],
                superseded_records: 4,
                unsupported_parts: 2,
                ..ImportReport::default()
            },
            ..ImportSummary::default()
        };
        let text = printed(&summary);
        assert!(text.contains("imported 3 records with a repair"), "{text}");
        assert!(
            text.contains("  rollout.jsonl:6: timestamp \"yesterday\" is not RFC 3339; dropped"),
            "{text}"
        );
        assert!(text.contains("  ... and 1 more"), "{text}");
        assert!(
            text.contains("4 records were replaced or removed"),
            "{text}"
        );
        assert!(
            text.contains("2 content blocks have no canonical part"),
            "{text}"
        );
    }

    #[test]
    fn a_clean_import_says_only_what_it_did() {
        let summary = ImportSummary {
            report: ImportReport {
                files: 1,
                lines: 10,
                ..ImportReport::default()
            },
            sessions_new: 1,
            ..ImportSummary::default()
        };
        assert_eq!(printed(&summary).lines().count(), 1);
    }
}
