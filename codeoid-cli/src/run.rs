//! `codeoid run` (a command with compressed stdout, raw output stored first) and
//! `codeoid hook claude-code` (the `PreToolUse` hook that routes Bash calls through it).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use codeoid_core::Memory;
use codeoid_core::compress::Stdin;
use codeoid_core::compress::claude_hook::{Guard, pre_tool_use, settings_paths, shell_words};
use codeoid_core::store::NewSession;

use crate::context::{Context, describe};

/// Arguments of `codeoid run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Store the raw output in this session: in the workspace it is stored in when it exists,
    /// else created in this one [default: $CODEOID_SESSION, else the workspace's `shell`
    /// session].
    #[arg(long, value_name = "SESSION_ID")]
    session: Option<String>,
    /// The command line, as one argument: `codeoid run -- 'cargo test 2>&1'`. Several arguments
    /// are a command and its arguments, each passed as it is (`codeoid run -- rm 'my file'`).
    #[arg(last = true, required = true, num_args = 1.., value_name = "COMMAND")]
    command: Vec<String>,
}

/// Runs the command where `codeoid run` was started, with its stdin; exits with its exit code.
/// When codeoid cannot prepare the store (an unreadable file, a session it cannot use), the
/// command still runs, unchanged and uncompressed, after a warning on stderr: a wrapper must
/// never stop the command it wraps. Failures to start the command exit 1.
pub fn run(context: &Context, args: &RunArgs) -> ExitCode {
    match try_run(context, args) {
        Ok(code) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        Err(err) => {
            warn!("codeoid run: {}", describe(&err));
            ExitCode::FAILURE
        }
    }
}

fn try_run(context: &Context, args: &RunArgs) -> anyhow::Result<i32> {
    let command = command_line(&args.command);
    let here = std::env::current_dir()?;
    let (memory, session_id) = match prepare(context, args) {
        Ok(prepared) => prepared,
        Err(err) => {
            warn!(
                "codeoid run: {}; running the command without storing its output",
                describe(&err)
            );
            let status = std::process::Command::new("sh")
                .arg("-c")
                .arg(&command)
                .status()?;
            return Ok(exit_code_of(status));
        }
    };
    let raw_command = raw_output_command(context, &memory)?;
    let output = memory.run_in(
        &session_id,
        &command,
        &here,
        Stdin::Inherit,
        Some(&raw_command),
    )?;
    std::io::stdout().lock().write_all(&output.stdout)?;
    // The command's own stderr, like our messages, is best effort: a closed stderr must not
    // turn its exit code into ours.
    let _ = std::io::stderr().lock().write_all(&output.stderr);
    if let Some(err) = &output.store_error {
        warn!(
            "codeoid run: raw output not stored, shown uncompressed: {}",
            err.full_message()
        );
    }
    Ok(output.exit_code)
}

/// The shell command line `codeoid run` runs: one word byte for byte (a whole command line,
/// pipes and redirections included); several words as the command and arguments they are, each
/// quoted for the shell where it needs to be, so `codeoid run -- rm 'my file'` removes one file.
fn command_line(words: &[String]) -> String {
    match words {
        [line] => line.clone(),
        words => shell_words(&words.iter().map(String::as_str).collect::<Vec<_>>()),
    }
}

/// The command the hint names for the raw output: the model reads `codeoid run` output through
/// its shell, where no `get_episode` tool exists. It names the store when `--db` chose it and
/// always the workspace the episode is in (the session's, which may not be this directory's).
fn raw_output_command(context: &Context, memory: &Memory) -> anyhow::Result<String> {
    let mut words = vec!["codeoid".to_owned()];
    words.extend(context.db_args()?);
    words.extend([
        "--workspace".to_owned(),
        memory.workspace().id().to_owned(),
        "show".to_owned(),
        "--blob".to_owned(),
        "stdout".to_owned(),
    ]);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    Ok(shell_words(&words))
}

/// The memory and the session that `codeoid run` records into: `--session` (else
/// `$CODEOID_SESSION`) in the workspace it is stored in, created in this workspace when new;
/// without one, this workspace's `shell` session.
fn prepare(context: &Context, args: &RunArgs) -> anyhow::Result<(Memory, String)> {
    let requested = args.session.clone().or_else(|| {
        std::env::var("CODEOID_SESSION")
            .ok()
            .filter(|s| !s.is_empty())
    });
    let memory = match &requested {
        Some(id) => context.memory_for_session(id)?,
        None => context.memory()?,
    };
    let session_id = requested.unwrap_or_else(|| format!("{}-shell", memory.workspace().id()));
    let name = if session_id.ends_with("-shell") {
        "shell"
    } else {
        "harness session"
    };
    memory.start_session(NewSession {
        id: Some(session_id.clone()),
        name: Some(name.to_string()),
        ..NewSession::default()
    })?;
    Ok((memory, session_id))
}

/// A shell's exit code for `status`: its code, or 128 + the signal that ended it.
fn exit_code_of(status: std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    status.code().unwrap_or(1)
}

/// Arguments of `codeoid hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    harness: Harness,
}

#[derive(Debug, Subcommand)]
enum Harness {
    /// Claude Code `PreToolUse` hook: reads the hook input on stdin and rewrites Bash calls to run
    /// through `codeoid run` (see docs/compression.md).
    ClaudeCode,
    /// Print the Claude Code settings JSON that installs the hook.
    ClaudeCodeSettings,
}

/// Answers the hook. Exit 0 with the answer (or nothing) on stdout; exit 1 with the reason on
/// stderr, which Claude Code treats as a non-blocking error (the call runs unchanged).
pub fn hook(context: &Context, args: &HookArgs) -> ExitCode {
    let result = invocation(context).and_then(|words| {
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        match args.harness {
            Harness::ClaudeCode => claude_code_hook(&words),
            Harness::ClaudeCodeSettings => {
                let settings = codeoid_core::compress::claude_hook::claude_code_settings(&words);
                let text = serde_json::to_string_pretty(&settings)?;
                writeln!(std::io::stdout(), "{text}")?;
                Ok(())
            }
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            warn!("codeoid hook: {}", describe(&err));
            ExitCode::FAILURE
        }
    }
}

/// The words that start this codeoid with the global options it was given (`--db`,
/// `--workspace`), so what the hook writes uses the same store and workspace.
fn invocation(context: &Context) -> anyhow::Result<Vec<String>> {
    let mut words = vec![program_name()];
    words.extend(context.global_args()?);
    Ok(words)
}

fn claude_code_hook(codeoid: &[&str]) -> anyhow::Result<()> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let project = serde_json::from_str::<serde_json::Value>(&input)
        .ok()
        .and_then(|v| v.get("cwd").and_then(|c| c.as_str()).map(PathBuf::from))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let texts: Vec<String> = settings_paths(&project, &home)
        .into_iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .collect();
    let guard = Guard::from_settings(&texts);
    if let Some(answer) = pre_tool_use(&input, codeoid, &guard)? {
        writeln!(std::io::stdout(), "{answer}")?;
    }
    Ok(())
}

/// How the hook refers to this program: `codeoid` when that is what `PATH` finds, else the
/// absolute path of this executable.
fn program_name() -> String {
    let current = std::env::current_exe().ok();
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("codeoid"))
            .find(|candidate| candidate.is_file())
    });
    match (current, on_path) {
        (Some(current), Some(found))
            if std::fs::canonicalize(&current).ok() == std::fs::canonicalize(&found).ok() =>
        {
            "codeoid".to_string()
        }
        (Some(current), _) => current.display().to_string(),
        (None, _) => "codeoid".to_string(),
    }
}
