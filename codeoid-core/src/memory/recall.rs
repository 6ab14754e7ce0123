//! Recall over the store: hybrid retrieval of this workspace's episodes as seen from a calling
//! session, the background embedding worker's flush, status and warnings, and what recording
//! hands to it (new episodes to embed, read files to hash).

use std::time::Duration;

use super::Memory;
use crate::canonical::{Part, PathAccess};
use crate::error::Result;
use crate::retrieve::{EmbeddingStatus, Hit, RecallQuery, Retriever};
use crate::store::EpisodeHeader;
use crate::tools::{DiskState, FileRecall, PassedOver, ReadPart, disk_state, read_part};

/// How many turns before the episode's own `recall_file` searches for the read's call: results
/// recorded one message at a time (OpenAI's formats) and a subagent's turns interleaved in a
/// main log can stand between a call and its result. Turns are filtered by the call id in SQL
/// before any is parsed, so the reach costs little.
const CALL_LOOKBACK_TURNS: u64 = 1_000;

/// Most reads of one file `recall_file` walks back through for a whole read of the same
/// content, when the latest may hold only part of it.
const MAX_READS_CONSIDERED: usize = 20;

impl Memory {
    /// The episodes of this workspace most relevant to `query`, best first, each with its four
    /// signals (DESIGN §2). Seen from `current_session`: unless `query.include_current_session`
    /// is set, that session's live episodes are left out (they are in its context already);
    /// after a rotation only those recorded since it are, so what the model can no longer see
    /// stays findable. Also usable with no session (`None`: nothing is excluded).
    ///
    /// Episodes recorded a moment ago may not be embedded yet (their `vec` is 0 until the
    /// worker reaches them); call [`Memory::flush`] first when that matters.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when `current_session`, or a session the filters name, is
    /// not in this workspace; [`crate::ErrorKind::InvalidInput`] for a limit outside 1..=100 or an
    /// empty time range;
    /// database errors.
    pub fn recall(&self, current_session: Option<&str>, query: &RecallQuery) -> Result<Vec<Hit>> {
        let mut query = query.clone();
        let filters = &query.filters;
        self.require_sessions([
            current_session,
            filters.session_id.as_deref(),
            filters.exclude_session_id.as_deref(),
        ])?;
        if let Some(session) = current_session {
            if !query.include_current_session {
                let from_pk = self.store.live_context_start(session)?.unwrap_or(i64::MIN);
                query.filters.exclude_live = Some((session.to_owned(), from_pk));
            }
        }
        self.retriever.recall(&query)
    }

    /// The most recent read of `path` (relative to the workspace root, or absolute; both forms
    /// find the same file) in any session of this workspace, with whether the file on disk
    /// changed since, and the latest write to it recorded after that read. With such a write,
    /// "unchanged" is reported as unknown: the read's hash may have been taken after it.
    /// [`FileRecall::part`] says when the read may have covered only part of the file. When the
    /// latest read may hold only part and an earlier read recorded the same content hash (no
    /// read recording another or none between them, no write to the file recorded after it)
    /// and is known to hold the whole file, that earlier read is returned instead, with the
    /// latest in [`FileRecall::passed_over`].
    ///
    /// # Errors
    /// Database errors; [`crate::ErrorKind::Corrupt`] when the read's stored turns no longer
    /// parse (the store was changed by something other than codeoid).
    pub fn recall_file(&self, path: &str) -> Result<Option<FileRecall>> {
        let ws = self.workspace.id();
        let relative = self.workspace.relativize(path);
        let mut reads = self
            .store
            .reads_of_path(ws, &relative, MAX_READS_CONSIDERED)?;
        if reads.is_empty() {
            return Ok(None);
        }
        let newest = reads[0].0.clone();
        let newest_part = self.read_part_of(&newest, &reads[0].1.given)?;
        let latest_write = self
            .store
            .latest_episode_for_path(ws, &relative, Some(PathAccess::Write))?
            .map(|(write, _)| write.header);
        // A read of part of the file gives way to the newest earlier whole read of the same
        // content: the same recorded hash, with no read recording another between them and no
        // write recorded after it (a hash is taken after the read's turn ran, so an edit in the
        // same turn gives the old text the new hash). A read whose call cannot be found is not
        // known to be whole.
        let mut chosen = 0;
        if let (Some(_), Some(hash)) = (&newest_part, reads[0].1.content_hash.clone()) {
            for (i, (episode, path)) in reads.iter().enumerate().skip(1) {
                if path.content_hash.as_deref() != Some(hash.as_str()) {
                    break;
                }
                if let Some(write) = &latest_write {
                    if self.written_after(write, episode)? {
                        break;
                    }
                }
                if self.read_coverage(episode, &path.given)? == Some(None) {
                    chosen = i;
                    break;
                }
            }
        }
        let (header, matched) = reads.swap_remove(chosen);
        let episode = self.store.episode(ws, &header.id)?;
        let (part, passed_over) = match newest_part {
            Some(part) if chosen > 0 => (
                None,
                Some(PassedOver {
                    header: newest.clone(),
                    part,
                }),
            ),
            part => (part, None),
        };
        // Measured from the newest read: the hash compared below is its hash too.
        let later_write = match latest_write {
            Some(w) if self.written_after(&w, &newest)? => Some(w),
            _ => None,
        };
        let mut disk = disk_state(self.workspace.root(), &matched);
        if disk == DiskState::Unchanged && later_write.is_some() {
            // The hash is taken when the read is recorded, after the tools of its turn ran: an
            // edit made in the same turn may already be in it. Claiming "unchanged" could tell
            // the model a stale read is current.
            disk = DiskState::Unknown(
                "the file matches the hash recorded with this read, but the write below came \
                 after the read and may predate that hash; read the file again"
                    .to_owned(),
            );
        }
        Ok(Some(FileRecall {
            episode,
            path: matched,
            disk,
            later_write,
            part,
            passed_over,
        }))
    }

    /// Whether `write` came after `read`: later in time, or at the same time (one turn's calls
    /// share its time) and recorded after it, which is the order the calls were made in.
    fn written_after(&self, write: &EpisodeHeader, read: &EpisodeHeader) -> Result<bool> {
        Ok(write.created_at > read.created_at
            || (write.created_at == read.created_at
                && self
                    .store
                    .recorded_after(self.workspace.id(), &write.id, &read.id)?))
    }

    /// What part of file `given` (as the call named it) the read behind episode `header`
    /// covered ([`read_part`]); `None` (shown as a whole read) when its call is not found.
    fn read_part_of(&self, header: &EpisodeHeader, given: &str) -> Result<Option<ReadPart>> {
        Ok(self.read_coverage(header, given)?.flatten())
    }

    /// [`Memory::read_part_of`], with `None` when the call behind the read is not found (no
    /// call id, or beyond the lookback), from the session's verbatim turns: the call's input,
    /// and the harness's own record of the read when the results turn kept one. Only turns
    /// that name the call id are parsed.
    fn read_coverage(
        &self,
        header: &EpisodeHeader,
        given: &str,
    ) -> Result<Option<Option<ReadPart>>> {
        let Some(call_id) = &header.call_id else {
            return Ok(None);
        };
        let last = header.turn_seq;
        let first = last.saturating_sub(CALL_LOOKBACK_TURNS);
        let quoted = serde_json::Value::from(call_id.as_str()).to_string();
        let turns = self
            .store
            .turns_mentioning(&header.session_id, first..=last, &quoted)?;
        let call = turns
            .iter()
            .rev()
            .flat_map(|stored| &stored.turn.parts)
            .find_map(|part| match part {
                Part::ToolCall(call) if &call.id == call_id => Some(call),
                _ => None,
            });
        let Some(call) = call else {
            return Ok(None);
        };
        // Claude Code's importer keys its record by the provider's id.
        let keys = [Some(call_id.as_str()), call.provider_id.as_deref()];
        let recorded = turns.iter().rev().find_map(|stored| {
            let records = stored.turn.meta.get("tool_use_results")?;
            keys.iter().flatten().find_map(|key| records.get(*key))
        });
        Ok(Some(read_part(&call.input, recorded, Some(given))))
    }

    /// Waits until every episode recorded in this workspace before the call is embedded and
    /// searchable by meaning. Returns at once when embeddings are unavailable or disabled; while
    /// a model is being downloaded it waits for the download.
    ///
    /// # Errors
    /// A database error reading the newest episode; the worker's own store error when it has
    /// failed three passes in a row to read or write the store (it keeps retrying, but a flush
    /// does not wait for a worker that cannot make progress).
    pub fn flush(&self) -> Result<()> {
        self.retriever.flush()
    }

    /// [`Memory::flush`], giving up after `timeout`; `Ok(false)` means it timed out.
    ///
    /// # Errors
    /// As [`Memory::flush`].
    pub fn flush_timeout(&self, timeout: Duration) -> Result<bool> {
        self.retriever.flush_timeout(timeout)
    }

    /// [`Memory::flush`], giving up after `timeout` (`None`: never) or as soon as
    /// `keep_waiting`, asked about every 100 ms while it waits, returns `false`: for a binding
    /// that must notice a Ctrl-C (Python) or a cancelled context while it waits. `Ok(false)`
    /// means it gave up.
    ///
    /// # Errors
    /// As [`Memory::flush`].
    pub fn flush_while(
        &self,
        timeout: Option<Duration>,
        keep_waiting: &mut dyn FnMut() -> bool,
    ) -> Result<bool> {
        self.retriever.flush_while(timeout, keep_waiting)
    }

    /// Warnings to show the person once (not per call): why recall is lexical only, episodes
    /// the model failed on, store errors the worker is retrying. Empty when all is well.
    pub fn warnings(&self) -> Vec<String> {
        self.retriever.warnings()
    }

    /// The embedding worker's progress: phase, model, episodes indexed, index memory.
    pub fn embedding_status(&self) -> EmbeddingStatus {
        self.retriever.status()
    }

    /// The retriever (for callers that embed queries themselves, and benchmarks).
    pub fn retriever(&self) -> &Retriever {
        &self.retriever
    }

    /// After a live turn is recorded: hash the files its episodes read (when configured) and
    /// wake the embedding worker. Neither may fail the recording that already succeeded: a
    /// file that cannot be hashed just has no hash.
    pub(super) fn after_live_record(&self, episode_ids: &[String]) {
        if self.config.hash_live_reads && !episode_ids.is_empty() {
            let _ = self.store.hash_unhashed_reads(episode_ids);
        }
        self.retriever.notify_recorded();
    }
}
