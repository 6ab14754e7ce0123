//! The `codeoid` command-line tool: import session logs, walk and search memory, run commands
//! with compressed output, and the Claude Code hook.
//!
//! Every command is a thin layer over `codeoid_core::Memory`; this crate owns argument parsing,
//! progress display and exit codes, nothing else. Errors print their full cause chain on stderr
//! and exit with status 1 (2 for usage errors, from clap). Messages go to stderr through
//! [`warn`], which never panics: a closed stderr (`codeoid … 2>&1 | head`) loses a message, never
//! the command's work.

/// `eprintln!` that cannot panic: a message that stderr refuses (a closed pipe) is dropped.
macro_rules! warn {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod context;
mod demo;
mod lineage;
mod quickstart;
mod read;
mod recall;
mod run;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Session memory for AI coding agents: the context window is a cache, the session history is a
/// database.
#[derive(Debug, Parser)]
#[command(name = "codeoid", version, about, long_about = None)]
struct Cli {
    /// The store file [default: $CODEOID_DB, else codeoid.db in the platform data directory].
    #[arg(long, global = true, value_name = "FILE")]
    db: Option<PathBuf>,
    /// The workspace: a directory inside it, or a workspace id (`ws_…`, see `codeoid stats`)
    /// [default: the current directory].
    #[arg(long, short = 'w', global = true, value_name = "DIR|ID")]
    workspace: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Import this machine's agent logs (or record a demo session) and show what memory holds.
    Quickstart(quickstart::QuickstartArgs),
    /// Import session logs (Claude Code, Codex CLI, Gemini CLI, SWE-agent) into the store.
    Import(lineage::ImportArgs),
    /// Fork a session into a new one, optionally handed off to another backend.
    Fork(lineage::ForkArgs),
    /// Walk the workspace's episodes, newest first.
    Timeline(read::TimelineArgs),
    /// Search memory (hybrid: meaning, words, recency, paths), as the model's recall tool does.
    Recall(recall::RecallArgs),
    /// The most recent read of a file, and whether it changed on disk since.
    RecallFile(recall::RecallFileArgs),
    /// Print one episode: its model-facing text, or the exact stored bytes with --raw.
    Show(read::ShowArgs),
    /// List the workspace's sessions with their lineage and rotations.
    Sessions,
    /// Counts per workspace in the store.
    Stats,
    /// Print the workspace index block a system prompt would carry.
    Index(read::IndexArgs),
    /// Run a shell command, store its raw output, print it compressed.
    Run(run::RunArgs),
    /// Hook entry points for agent harnesses.
    Hook(run::HookArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let records = matches!(
        cli.command,
        Command::Quickstart(_)
            | Command::Import(_)
            | Command::Fork(_)
            | Command::Run(_)
            | Command::Hook(_)
    );
    let context = context::Context::new(cli.db, cli.workspace, records);
    let result = match cli.command {
        Command::Quickstart(args) => quickstart::quickstart(&context, &args),
        Command::Import(args) => lineage::import(&context, &args),
        Command::Fork(args) => lineage::fork(&context, &args),
        Command::Timeline(args) => read::timeline(&context, &args),
        Command::Recall(args) => recall::recall(&context, &args),
        Command::RecallFile(args) => recall::recall_file(&context, &args),
        Command::Show(args) => read::show(&context, &args),
        Command::Sessions => read::sessions(&context),
        Command::Stats => read::stats(&context),
        Command::Index(args) => read::index(&context, &args),
        Command::Run(args) => return run::run(&context, &args),
        Command::Hook(args) => return run::hook(&context, &args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stopped early (`codeoid show … | head`) is not a failure.
        Err(err) if context::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            warn!("codeoid: {}", context::describe(&err));
            ExitCode::FAILURE
        }
    }
}
