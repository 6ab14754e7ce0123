//! Search commands: `recall` (hybrid search, printed as the model reads it or with each hit's
//! four signals) and `recall-file` (a file's last read), both answered by the memory tools.

use std::io::Write;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Args;
use codeoid_core::Memory;
use codeoid_core::retrieve::{EmbeddingPhase, Hit, MAX_RECALL_LIMIT, RecallQuery};
use codeoid_core::store::iso8601;
use codeoid_core::tools::RECALL_MAX_LIMIT;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::context::Context;

/// Arguments of `codeoid recall`.
#[derive(Debug, Args)]
pub struct RecallArgs {
    /// What to look for: a topic, a question, an error message, an identifier or a path.
    query: String,
    /// Hits to return: 1..=20 as the model's recall tool shows them, up to 100 with --scores.
    #[arg(long, short = 'n', default_value_t = 5, allow_negative_numbers = true,
          value_parser = clap::value_parser!(i64).range(1..=MAX_RECALL_LIMIT as i64))]
    limit: i64,
    /// Search as seen from this session (its live context, what it did since its last
    /// rotation, is left out).
    #[arg(long, value_name = "SESSION_ID")]
    session: Option<String>,
    /// Only episodes of this tool (for example Bash, Read, Edit).
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// Print one line per hit with its score and four signals instead of the model's text.
    #[arg(long)]
    scores: bool,
    /// Seconds to wait for the embedding worker to catch up before searching (episodes it has
    /// not reached yet are found by words, path and recency only).
    #[arg(long, value_name = "SECONDS", default_value_t = 20)]
    wait: u64,
}

/// Arguments of `codeoid recall-file`.
#[derive(Debug, Args)]
pub struct RecallFileArgs {
    /// The file, relative to the workspace root or absolute.
    path: String,
}

pub fn recall(context: &Context, args: &RecallArgs) -> Result<()> {
    // At least 1 (checked by clap).
    let limit = args.limit.unsigned_abs();
    if !args.scores && limit > RECALL_MAX_LIMIT {
        bail!(
            "--limit {limit} is more than the recall tool returns ({RECALL_MAX_LIMIT}); add --scores \
             for up to {MAX_RECALL_LIMIT} hits"
        );
    }
    let memory = context.memory_for_recall()?;
    if let Some(session) = &args.session {
        memory.session(session)?;
    }
    wait_for_vectors(&memory, Duration::from_secs(args.wait))?;
    let mut out = std::io::stdout().lock();
    if args.scores {
        let mut query = RecallQuery::new(args.query.clone()).limit(limit as usize);
        query.filters.tool_name = args.tool.clone();
        let hits = memory.recall(args.session.as_deref(), &query)?;
        if hits.is_empty() {
            writeln!(out, "no episode matches {:?}", args.query)?;
        }
        for hit in &hits {
            writeln!(out, "{}", score_line(hit))?;
        }
        return Ok(());
    }
    let mut arguments = json!({ "query": args.query, "limit": limit });
    if let Some(tool) = &args.tool {
        arguments["tool_name"] = json!(tool);
    }
    let output = memory.call_tool(args.session.as_deref(), "recall", &arguments.to_string());
    if output.is_error {
        bail!("{}", output.text);
    }
    writeln!(out, "{}", output.text)?;
    Ok(())
}

pub fn recall_file(context: &Context, args: &RecallFileArgs) -> Result<()> {
    let memory = context.memory()?;
    let arguments = json!({ "path": args.path });
    let output = memory.call_tool(None, "recall_file", &arguments.to_string());
    if output.is_error {
        bail!("{}", output.text);
    }
    writeln!(std::io::stdout().lock(), "{}", output.text)?;
    Ok(())
}

/// One line per hit: id, time, score with its four signals, summary.
pub fn score_line(hit: &Hit) -> String {
    let c = hit.components;
    format!(
        "{} [{}] score {:.3} (vec {:.2}, bm25 {:.2}, recency {:.2}, path {:.2})  {}",
        hit.header.id,
        iso8601(hit.header.created_at),
        hit.score,
        c.vec,
        c.bm25,
        c.recency,
        c.path,
        hit.header.summary
    )
}

/// Lets the embedding worker catch up for at most `timeout`, and says on stderr when recall
/// will be partly or wholly lexical (the worker's own warnings explain a missing model). A first
/// download of the model is waited for whatever the timeout, with a progress bar: it happens
/// once, and stopping it halfway would only start it again next time.
pub fn wait_for_vectors(memory: &Memory, timeout: Duration) -> Result<()> {
    wait_for_download(memory);
    let caught_up = memory.flush_timeout(timeout)?;
    let status = memory.embedding_status();
    for warning in memory.warnings() {
        warn!("codeoid: {warning}");
    }
    match status.phase {
        EmbeddingPhase::Disabled => {
            warn!("codeoid: embeddings are off (CODEOID_EMBEDDINGS=0): lexical recall")
        }
        _ if !caught_up => warn!(
            "codeoid: the embedding worker is still catching up ({} episodes embedded so far); \
             rerun with a larger --wait for fully semantic recall",
            status.indexed_episodes
        ),
        _ => {}
    }
    Ok(())
}

/// Shows the model download's progress on stderr until it ends (if one is running).
fn wait_for_download(memory: &Memory) {
    if memory.embedding_status().phase != EmbeddingPhase::Downloading {
        return;
    }
    warn!("codeoid: downloading the embedding model (once; later runs find it in the cache)");
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    loop {
        let status = memory.embedding_status();
        if status.phase != EmbeddingPhase::Downloading {
            break;
        }
        if let Some(progress) = status.download {
            bar.set_length(progress.bytes_total);
            bar.set_position(progress.bytes_done);
            bar.set_message(progress.file);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
}
