//! Compression over the store: [`StoreSink`] keeps a command's raw stdout and stderr as an
//! episode before the compressed text is shown, so `get_episode` always has the original bytes.
//!
//! Compressed text is shown only where the model can trade it back for those bytes. With memory
//! switched off ([`super::MemoryConfig::memory_enabled`]) `get_episode` answers that memory is
//! off, so [`Memory::run`] shows stdout whole (still storing it first, as turns are still
//! recorded); [`Memory::run_in`] with a `raw_command` still compresses, since that shell command
//! reads the store whether memory is on or not.

use std::path::Path;
use std::time::Duration;

use super::Memory;
use crate::compress::{Compressed, RawOutputSink, RunOutput, Runner, Stdin};
use crate::error::Result;
use crate::store::{RawOutput, Store};

/// A [`RawOutputSink`] that records raw command output as an episode of one session.
#[derive(Clone, Copy)]
pub struct StoreSink<'a> {
    store: &'a Store,
    session_id: &'a str,
}

impl<'a> StoreSink<'a> {
    /// A sink writing to `session_id` of `store`.
    pub fn new(store: &'a Store, session_id: &'a str) -> StoreSink<'a> {
        StoreSink { store, session_id }
    }
}

impl RawOutputSink for StoreSink<'_> {
    fn store_raw(
        &self,
        command: &str,
        stdout: &[u8],
        stderr: &[u8],
        exit_code: i32,
    ) -> Result<String> {
        self.store.record_raw_output(
            self.session_id,
            &RawOutput::new(command, stdout, stderr, Some(exit_code)),
        )
    }
}

impl Memory {
    /// Compresses `stdout` of `command` with the configured rules, or `None` when no rule saves
    /// enough (the output is then shown as is). Pure: nothing is stored; use [`Memory::run`] to
    /// keep the raw bytes reachable. It compresses with memory switched off too: a caller that
    /// shows the result with a `get_episode` hint must then have another way to the raw bytes.
    pub fn compress(&self, command: &str, stdout: &[u8]) -> Option<Compressed> {
        self.compress.compress(command, stdout)
    }

    /// Runs `command` with `sh -c` in the workspace root, stores its raw stdout and stderr as an
    /// episode of `session_id` first, then returns the compressed stdout ending with the
    /// `get_episode` hint. stderr and the exit code pass through unchanged; stdin is closed. A
    /// command running past [`super::MemoryConfig::run_timeout`] is killed; see
    /// [`RunOutput::timed_out`]. With memory switched off, stdout is stored but shown
    /// uncompressed: the `get_episode` tool the hint would name is switched off too.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when the session is not in this workspace;
    /// [`crate::ErrorKind::InvalidInput`] for an empty command; [`crate::ErrorKind::Io`] when the
    /// shell cannot start. A failing command is not an error: see [`RunOutput::exit_code`].
    pub fn run(&self, session_id: &str, command: &str) -> Result<RunOutput> {
        self.run_with_timeout(session_id, command, self.config.run_timeout)
    }

    /// [`Memory::run`] with this call's own `timeout` in place of
    /// [`super::MemoryConfig::run_timeout`]: `None` or a zero duration waits as long as the
    /// command runs. For a harness whose model gives each command its own limit (Claude Code's
    /// `Bash` tool takes a `timeout`), or that allows a build longer than a listing.
    ///
    /// # Errors
    /// As [`Memory::run`].
    pub fn run_with_timeout(
        &self,
        session_id: &str,
        command: &str,
        timeout: Option<Duration>,
    ) -> Result<RunOutput> {
        let runner = self.runner(self.workspace.root(), Stdin::Null, None, timeout);
        self.run_with(session_id, command, &runner, None)
    }

    /// [`Memory::run_with_timeout`], asking `keep_going` about every 0.1 s while the command
    /// runs: when it answers `false` (a Ctrl-C the caller caught) the command is killed with
    /// everything it started, and what it printed until then is stored and returned with
    /// [`RunOutput::interrupted`] set (see [`Runner::run_while`]).
    ///
    /// # Errors
    /// As [`Memory::run`].
    pub fn run_with_timeout_while(
        &self,
        session_id: &str,
        command: &str,
        timeout: Option<Duration>,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<RunOutput> {
        let runner = self.runner(self.workspace.root(), Stdin::Null, None, timeout);
        self.run_with(session_id, command, &runner, Some(keep_going))
    }

    /// [`Memory::run`] in directory `dir` with `stdin`: what a wrapper standing in for the shell
    /// needs (`codeoid run` runs where it was started and passes its stdin on, so `cd web &&
    /// codeoid run -- npm test` and `producer | codeoid run -- consumer` behave as without it).
    /// With `raw_command`, the hint names that shell command (given the episode id, it prints
    /// the raw output) instead of the `get_episode` tool: see [`Runner::raw_command`].
    ///
    /// # Errors
    /// As [`Memory::run`].
    pub fn run_in(
        &self,
        session_id: &str,
        command: &str,
        dir: &Path,
        stdin: Stdin,
        raw_command: Option<&str>,
    ) -> Result<RunOutput> {
        let runner = self.runner(dir, stdin, raw_command, self.config.run_timeout);
        self.run_with(session_id, command, &runner, None)
    }

    /// A runner for this memory: in `dir` with `stdin`, killing at `timeout`, the hint naming
    /// `raw_command` when given.
    fn runner(
        &self,
        dir: &Path,
        stdin: Stdin,
        raw_command: Option<&str>,
        timeout: Option<Duration>,
    ) -> Runner<'_> {
        // Elided lines must stay reachable: through `get_episode` only while memory is on.
        let reachable = self.config.memory_enabled || raw_command.is_some();
        let runner = Runner::new(&self.compress)
            .stdin(stdin)
            .current_dir(dir)
            .timeout(timeout)
            .compress(reachable);
        match raw_command {
            Some(raw_command) => runner.raw_command(raw_command),
            None => runner,
        }
    }

    /// Runs `command` with `runner`, its raw output stored as an episode of `session_id`.
    fn run_with(
        &self,
        session_id: &str,
        command: &str,
        runner: &Runner<'_>,
        keep_going: Option<&mut dyn FnMut() -> bool>,
    ) -> Result<RunOutput> {
        self.session(session_id)?;
        let sink = StoreSink::new(&self.store, session_id);
        let output = match keep_going {
            Some(keep_going) => runner.run_while(command, &sink, keep_going),
            None => runner.run(command, &sink),
        };
        self.retriever.notify_recorded();
        output
    }

    /// The compression rules in force.
    pub fn compression_rules(&self) -> &crate::compress::Registry {
        &self.compress
    }
}
