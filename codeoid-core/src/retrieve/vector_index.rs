//! The in-memory vector index of one workspace: every embedded window as an int8 row, with the
//! metadata recall filters need (session, tool, time), searched by a full scan.
//!
//! Layout: rows live in fixed-size blocks of contiguous int8 (one scale per row), so appending
//! never copies what is already there and a scan streams memory in order; episodes are a flat
//! table (`first_row`, window count, filter fields), and the windows of one episode are always
//! adjacent rows. A search walks the episode table, skips episodes the filter rejects without
//! touching their rows, and scores the others' windows with one kernel call each. An episode's
//! score is its best window's.
//!
//! Invariants: an episode is added whole (all its windows) or not at all, at most once (adding
//! a known episode again is ignored); every row has the index's dimension; filters are applied
//! before the top-k cut, so a filtered search returns matches whenever any episode passes.
//!
//! Why a scan and not an approximate-nearest-neighbour graph: at 100,000 episodes a scan of int8
//! rows takes a few milliseconds, is exact (up to quantization) under any filter, and costs no
//! build time; see `docs/retrieval.md` for the figures and what changes at a million.
//!
//! Deliberately not here: where vectors come from (the worker), exact rescoring (the engine
//! reads the f32 vectors back from the store), and the fusion with other signals.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};

use chrono::{DateTime, Utc};

use super::quantized::{dots, quantize, quantize_into};
use crate::error::{Error, Result};

/// Rows per storage block (1.5 MB of int8 at 384 dimensions).
const BLOCK_ROWS: usize = 4096;

/// Windows scored per kernel call (an episode has at most a handful; more are done in turns).
const MAX_SCAN_WINDOWS: usize = 16;

/// Marks "no tool" in the episode table.
const NO_TOOL: u32 = u32::MAX;

/// Episodes from which a search scans on several threads; below, one is faster than starting
/// more.
pub const PARALLEL_MIN_ENTRIES: usize = 16_384;

/// Most threads one search scans on.
const MAX_SCAN_THREADS: usize = 4;

/// One embedded episode's entry.
#[derive(Debug, Clone, Copy)]
struct Entry {
    pk: i64,
    created_ms: i64,
    session: u32,
    tool: u32,
    first_row: u32,
    windows: u32,
}

/// What an episode contributes besides its vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryMeta<'a> {
    /// Its key (the store's primary key; any unique integer outside a store).
    pub pk: i64,
    /// Its session id.
    pub session_id: &'a str,
    /// Its tool, for tool calls.
    pub tool_name: Option<&'a str>,
    /// When it was completed.
    pub created_at: DateTime<Utc>,
}

/// A search's filters, as values (resolved against the index's interned strings at search
/// time). `Default` filters nothing.
#[derive(Debug, Clone, Default)]
pub struct IndexFilter<'a> {
    /// Only this session.
    pub session_id: Option<&'a str>,
    /// Not this session.
    pub exclude_session_id: Option<&'a str>,
    /// A session's live context, left out: its episodes from this key on.
    pub exclude_live: Option<(&'a str, i64)>,
    /// Only this tool (ASCII case-insensitive, as SQLite's `lower()` in the lexical channel).
    pub tool_name: Option<&'a str>,
    /// Only at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only strictly before this time.
    pub until: Option<DateTime<Utc>>,
    /// Only these episodes (the path filter, resolved by the store).
    pub pks: Option<&'a HashSet<i64>>,
}

/// What [`VectorIndex::search_sampled`] found in one scan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampledScan {
    /// The best episodes, best first, as `(key, approximate cosine of the best window)`.
    pub hits: Vec<(i64, f32)>,
    /// How many episodes passed the filter (0 when no sample was asked for).
    pub scope: usize,
    /// The approximate cosines of up to the asked number of passing episodes, evenly spaced
    /// in insertion order.
    pub sample: Vec<f32>,
}

/// Strings seen often (session ids, tool names), stored once.
#[derive(Debug, Default)]
struct Interner {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Interner {
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(NO_TOOL - 1);
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        id
    }

    fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }
}

/// A scored episode in the top-k heap, ordered by score then (newer) primary key.
#[derive(Debug, Clone, Copy)]
struct Scored {
    score: f32,
    pk: i64,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed, so the BinaryHeap (a max-heap) keeps the worst of the kept on top.
        other
            .score
            .total_cmp(&self.score)
            .then(other.pk.cmp(&self.pk))
    }
}

/// The vector index of one workspace for one model. [`super::Retriever`] keeps one, filled
/// by its embedding worker; it is public so benchmarks and embedders can use it on its own.
#[derive(Debug)]
pub struct VectorIndex {
    dim: usize,
    blocks: Vec<Box<[i8]>>,
    scales: Vec<f32>,
    entries: Vec<Entry>,
    by_pk: HashMap<i64, u32>,
    sessions: Interner,
    tools: Interner,
}

impl VectorIndex {
    /// An empty index for vectors of `dim` components.
    pub fn new(dim: usize) -> VectorIndex {
        VectorIndex {
            dim,
            blocks: Vec::new(),
            scales: Vec::new(),
            entries: Vec::new(),
            by_pk: HashMap::new(),
            sessions: Interner::default(),
            tools: Interner::default(),
        }
    }

    /// Vector width.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Episodes indexed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when no episode is indexed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Windows (rows) of the indexed episodes (a removed episode's rows, still allocated, do
    /// not count).
    pub fn rows(&self) -> usize {
        self.entries.iter().map(|e| e.windows as usize).sum()
    }

    /// Whether episode `pk` is indexed.
    pub fn contains(&self, pk: i64) -> bool {
        self.by_pk.contains_key(&pk)
    }

    /// Bytes held by rows, scales and the episode table (not counting the small interners).
    pub fn memory_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_ROWS * self.dim
            + self.scales.capacity() * 4
            + self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.by_pk.capacity() * (std::mem::size_of::<(i64, u32)>() + 1)
    }

    /// Adds episode `meta` with its window vectors. Ignored (returns `Ok(false)`) when the
    /// episode is already indexed.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when there are no windows or one has the wrong
    /// dimension or a non-finite value; the index is unchanged then.
    pub fn add(&mut self, meta: EntryMeta<'_>, windows: &[Vec<f32>]) -> Result<bool> {
        if self.by_pk.contains_key(&meta.pk) {
            return Ok(false);
        }
        if windows.is_empty()
            || windows
                .iter()
                .any(|w| w.len() != self.dim || w.iter().any(|x| !x.is_finite()))
        {
            return Err(Error::invalid_input(format!(
                "episode #{} has {} windows that are not all finite {}-component vectors; \
                 re-embed it",
                meta.pk,
                windows.len(),
                self.dim
            )));
        }
        let first_row = self.scales.len();
        let (Ok(first), Ok(count)) = (u32::try_from(first_row), u32::try_from(windows.len()))
        else {
            return Err(Error::invalid_input(
                "the vector index is full (2^32 rows); use a smaller workspace",
            ));
        };
        for window in windows {
            let row = self.scales.len();
            if row % BLOCK_ROWS == 0 {
                self.blocks
                    .push(vec![0i8; BLOCK_ROWS * self.dim].into_boxed_slice());
            }
            let offset = (row % BLOCK_ROWS) * self.dim;
            let block = self.blocks.len() - 1;
            let scale = quantize_into(window, &mut self.blocks[block][offset..offset + self.dim]);
            self.scales.push(scale);
        }
        let entry = Entry {
            pk: meta.pk,
            created_ms: meta.created_at.timestamp_millis(),
            session: self.sessions.intern(meta.session_id),
            tool: meta
                .tool_name
                .map_or(NO_TOOL, |t| self.tools.intern(&t.to_ascii_lowercase())),
            first_row: first,
            windows: count,
        };
        self.by_pk.insert(meta.pk, self.entries.len() as u32);
        self.entries.push(entry);
        Ok(true)
    }

    /// Removes episode `pk` (one a replaced tail deleted). Its rows stay allocated, unscanned,
    /// until the index is rebuilt (the next time memory opens): replacements delete a few
    /// episodes at a time. Returns whether it was indexed.
    pub fn remove(&mut self, pk: i64) -> bool {
        let Some(at) = self.by_pk.remove(&pk) else {
            return false;
        };
        let at = at as usize;
        self.entries.swap_remove(at);
        if let Some(moved) = self.entries.get(at) {
            self.by_pk.insert(moved.pk, at as u32);
        }
        true
    }

    /// The keys of every indexed episode, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = i64> + '_ {
        self.entries.iter().map(|e| e.pk)
    }

    /// The `k` best episodes for the unit vector `query` among those passing `filter`, best
    /// first, as `(key, approximate cosine of the best window)`. A large index is scanned on
    /// as many threads as the machine has cores (at most 4).
    pub fn search(&self, query: &[f32], filter: &IndexFilter<'_>, k: usize) -> Vec<(i64, f32)> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.search_on(query, filter, k, cores)
    }

    /// [`VectorIndex::search`] on at most `threads` threads (fewer below
    /// [`PARALLEL_MIN_ENTRIES`] episodes; 0 counts as 1): for a caller that knows other work is
    /// running beside it.
    pub fn search_on(
        &self,
        query: &[f32],
        filter: &IndexFilter<'_>,
        k: usize,
        threads: usize,
    ) -> Vec<(i64, f32)> {
        self.search_sampled(query, filter, k, threads, 0).hits
    }

    /// [`VectorIndex::search_on`], and from the same scan how many episodes pass `filter` and
    /// the approximate cosines of up to `sample` of them, evenly spaced over the index in
    /// insertion order (all of them when fewer pass): what this query scores against a typical
    /// episode in scope, for judging whether a hit stands out (see `relevance`). Taking the
    /// sample from the scan costs no second pass over the vectors. Nothing for a query of
    /// another width.
    pub fn search_sampled(
        &self,
        query: &[f32],
        filter: &IndexFilter<'_>,
        k: usize,
        threads: usize,
        sample: usize,
    ) -> SampledScan {
        if (k == 0 && sample == 0) || query.len() != self.dim || self.entries.is_empty() {
            return SampledScan::default();
        }
        let Some(pass) = self.resolve(filter) else {
            return SampledScan::default();
        };
        let (q, q_scale) = quantize(query);
        let keep_scores = sample > 0;
        // Large indexes are scanned in contiguous parts on several threads (the scan streams
        // memory, so each core adds bandwidth); each part keeps its own top k.
        let threads = if self.entries.len() >= PARALLEL_MIN_ENTRIES {
            threads.clamp(1, MAX_SCAN_THREADS)
        } else {
            1
        };
        let part = self.entries.len().div_ceil(threads);
        let scan = |entries| self.scan(entries, &q, q_scale, &pass, k, keep_scores);
        let (mut found, scores) = std::thread::scope(|scope| {
            let others: Vec<_> = self.entries[part..]
                .chunks(part)
                .map(|entries| scope.spawn(move || scan(entries)))
                .collect();
            let (mut found, mut scores) = scan(&self.entries[..part]);
            // Parts are joined in index order, so the scores stay in insertion order.
            for other in others {
                let (more, more_scores) = other
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                found.extend(more);
                scores.extend(more_scores);
            }
            (found, scores)
        });
        found.sort();
        found.truncate(k);
        let scope = scores.len();
        let step = scope.div_ceil(sample.max(1)).max(1);
        SampledScan {
            hits: found.into_iter().map(|s| (s.pk, s.score)).collect(),
            scope: if keep_scores { scope } else { 0 },
            sample: scores.into_iter().step_by(step).collect(),
        }
    }

    /// The top `k` of `entries` that pass `pass`, unordered, and (with `keep_scores`) the
    /// score of every passing entry in order.
    fn scan(
        &self,
        entries: &[Entry],
        q: &[i8],
        q_scale: f32,
        pass: &(impl Fn(&Entry) -> bool + Sync),
        k: usize,
        keep_scores: bool,
    ) -> (Vec<Scored>, Vec<f32>) {
        let mut heap: BinaryHeap<Scored> =
            BinaryHeap::with_capacity(k.min(entries.len()).saturating_add(1));
        let mut scores = Vec::with_capacity(if keep_scores { entries.len() } else { 0 });
        let mut raw = [0i32; MAX_SCAN_WINDOWS];
        // Entries are in row order and an episode's windows are adjacent rows, so this walks
        // memory front to back; an episode that fails the filter costs no arithmetic at all.
        for entry in entries {
            if !pass(entry) {
                continue;
            }
            let score = self.best_window(q, entry, &mut raw) * q_scale;
            if keep_scores {
                scores.push(score);
            }
            let scored = Scored {
                score,
                pk: entry.pk,
            };
            if heap.len() < k {
                heap.push(scored);
            } else if heap.peek().is_some_and(|worst| scored < *worst) {
                heap.pop();
                heap.push(scored);
            }
        }
        (heap.into_vec(), scores)
    }

    /// The best scaled int8 score (`dot × row scale`) of `entry`'s windows for the int8 query `q`.
    fn best_window(&self, q: &[i8], entry: &Entry, raw: &mut [i32; MAX_SCAN_WINDOWS]) -> f32 {
        let mut best = f32::NEG_INFINITY;
        let mut row = entry.first_row as usize;
        let end = row + entry.windows as usize;
        while row < end {
            // The rows up to the end of this block (or of the episode) are contiguous.
            let in_block = (BLOCK_ROWS - row % BLOCK_ROWS)
                .min(end - row)
                .min(MAX_SCAN_WINDOWS);
            let offset = (row % BLOCK_ROWS) * self.dim;
            let rows = &self.blocks[row / BLOCK_ROWS][offset..offset + in_block * self.dim];
            dots(q, rows, &mut raw[..in_block]);
            for (i, dot) in raw[..in_block].iter().enumerate() {
                best = best.max(*dot as f32 * self.scales[row + i]);
            }
            row += in_block;
        }
        best
    }

    fn row(&self, row: usize) -> &[i8] {
        let offset = (row % BLOCK_ROWS) * self.dim;
        &self.blocks[row / BLOCK_ROWS][offset..offset + self.dim]
    }

    /// A predicate for `filter`, or `None` when nothing can pass (an unknown session or tool).
    fn resolve<'f>(
        &self,
        filter: &'f IndexFilter<'_>,
    ) -> Option<impl Fn(&Entry) -> bool + Sync + 'f> {
        let session = match filter.session_id {
            Some(s) => Some(self.sessions.get(s)?),
            None => None,
        };
        let exclude = filter.exclude_session_id.and_then(|s| self.sessions.get(s));
        let tool = match filter.tool_name {
            Some(t) => Some(self.tools.get(&t.to_ascii_lowercase())?),
            None => None,
        };
        let since = filter.since.map(|t| t.timestamp_millis());
        let until = filter.until.map(|t| t.timestamp_millis());
        let pks = filter.pks;
        let live = filter
            .exclude_live
            .and_then(|(s, from_pk)| self.sessions.get(s).map(|id| (id, from_pk)));
        Some(move |e: &Entry| {
            session.is_none_or(|s| e.session == s)
                && exclude.is_none_or(|s| e.session != s)
                && live.is_none_or(|(s, from_pk)| e.session != s || e.pk < from_pk)
                && tool.is_none_or(|t| e.tool == t)
                && since.is_none_or(|t| e.created_ms >= t)
                && until.is_none_or(|t| e.created_ms < t)
                && pks.is_none_or(|set| set.contains(&e.pk))
        })
    }

    /// The mean of episode `pk`'s window vectors, dequantized (not normalized), or `None` when
    /// it is not indexed.
    pub fn mean_vector(&self, pk: i64) -> Option<Vec<f32>> {
        let entry = self.entries[*self.by_pk.get(&pk)? as usize];
        let mut mean = vec![0.0f32; self.dim];
        let start = entry.first_row as usize;
        for row in start..start + entry.windows as usize {
            let scale = self.scales[row];
            for (m, q) in mean.iter_mut().zip(self.row(row)) {
                *m += f32::from(*q) * scale;
            }
        }
        let n = entry.windows.max(1) as f32;
        mean.iter_mut().for_each(|m| *m /= n);
        Some(mean)
    }

    /// The cosine of the unit vector `query` and episode `pk`'s best window, from the int8 rows
    /// with `query` kept in f32 (so only the rows' quantization errs: well under 0.01), or
    /// `None` when the episode is not indexed or `query` has the wrong width.
    pub fn best_cosine(&self, pk: i64, query: &[f32]) -> Option<f32> {
        if query.len() != self.dim {
            return None;
        }
        let entry = self.entries[*self.by_pk.get(&pk)? as usize];
        let start = entry.first_row as usize;
        (start..start + entry.windows as usize)
            .map(|row| {
                let dot: f32 = query
                    .iter()
                    .zip(self.row(row))
                    .map(|(x, q)| x * f32::from(*q))
                    .sum();
                dot * self.scales[row]
            })
            .reduce(f32::max)
    }

    /// The keys of up to `n` indexed episodes, most recent first.
    pub fn most_recent(&self, n: usize) -> Vec<i64> {
        let mut order: Vec<&Entry> = self.entries.iter().collect();
        order.sort_by(|a, b| b.created_ms.cmp(&a.created_ms).then(b.pk.cmp(&a.pk)));
        order.into_iter().take(n).map(|e| e.pk).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn unit(values: &[f32]) -> Vec<f32> {
        let norm = values.iter().map(|x| x * x).sum::<f32>().sqrt();
        values.iter().map(|x| x / norm).collect()
    }

    fn meta(pk: i64, session: &str, tool: Option<&str>, hour: u32) -> EntryMeta<'static> {
        let session: &'static str = Box::leak(session.to_owned().into_boxed_str());
        let tool: Option<&'static str> = tool.map(|t| &*Box::leak(t.to_owned().into_boxed_str()));
        EntryMeta {
            pk,
            session_id: session,
            tool_name: tool,
            created_at: Utc.with_ymd_and_hms(2026, 1, 1, hour, 0, 0).unwrap(),
        }
    }

    #[test]
    fn a_removed_episode_is_never_found_and_the_others_still_are() {
        let mut index = VectorIndex::new(3);
        for (pk, v) in [
            (1, [1.0, 0.0, 0.0]),
            (2, [0.0, 1.0, 0.0]),
            (3, [0.0, 0.0, 1.0]),
        ] {
            index.add(meta(pk, "s", None, 1), &[unit(&v)]).unwrap();
        }
        assert!(index.remove(1));
        assert!(!index.remove(1), "once");
        assert_eq!((index.len(), index.rows()), (2, 2));
        assert!(!index.contains(1) && index.mean_vector(1).is_none());
        let all = index.search(&unit(&[1.0, 1.0, 1.0]), &IndexFilter::default(), 10);
        let mut keys: Vec<i64> = all.iter().map(|(pk, _)| *pk).collect();
        keys.sort_unstable();
        assert_eq!(keys, [2, 3]);
        // The entry moved into the freed slot is still found by its key.
        let best = index.search(&unit(&[0.0, 0.0, 1.0]), &IndexFilter::default(), 1);
        assert_eq!(best[0].0, 3);
        assert!(index.best_cosine(3, &unit(&[0.0, 0.0, 1.0])).unwrap() > 0.99);
        let mut all_keys: Vec<i64> = index.keys().collect();
        all_keys.sort_unstable();
        assert_eq!(all_keys, [2, 3]);
    }

    #[test]
    fn best_window_wins_and_filters_apply_before_the_cut() {
        let mut index = VectorIndex::new(3);
        // Episode 1: its second window matches the query exactly.
        index
            .add(
                meta(1, "s1", Some("Read"), 1),
                &[unit(&[0.0, 1.0, 0.0]), unit(&[1.0, 0.0, 0.0])],
            )
            .unwrap();
        index
            .add(meta(2, "s2", Some("Bash"), 2), &[unit(&[0.7, 0.7, 0.0])])
            .unwrap();
        index
            .add(meta(3, "s2", None, 3), &[unit(&[0.0, 0.0, 1.0])])
            .unwrap();
        let query = unit(&[1.0, 0.0, 0.0]);
        let hits = index.search(&query, &IndexFilter::default(), 2);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 2]);
        assert!((hits[0].1 - 1.0).abs() < 0.01, "{hits:?}");

        // Filters cut before top-k: the only s2 episode without a tool is still returned.
        let only = IndexFilter {
            session_id: Some("s2"),
            ..IndexFilter::default()
        };
        assert_eq!(index.search(&query, &only, 1)[0].0, 2);
        let tool = IndexFilter {
            tool_name: Some("read"),
            ..IndexFilter::default()
        };
        assert_eq!(index.search(&query, &tool, 5).len(), 1);
        let exclude = IndexFilter {
            exclude_session_id: Some("s1"),
            ..IndexFilter::default()
        };
        assert_eq!(index.search(&query, &exclude, 5).len(), 2);
        let late = IndexFilter {
            since: Some(Utc.with_ymd_and_hms(2026, 1, 1, 3, 0, 0).unwrap()),
            ..IndexFilter::default()
        };
        assert_eq!(index.search(&query, &late, 5)[0].0, 3);
        let set: HashSet<i64> = [3].into();
        let pks = IndexFilter {
            pks: Some(&set),
            ..IndexFilter::default()
        };
        assert_eq!(index.search(&query, &pks, 5)[0].0, 3);
        let unknown = IndexFilter {
            session_id: Some("nope"),
            ..IndexFilter::default()
        };
        assert!(index.search(&query, &unknown, 5).is_empty());
    }

    #[test]
    fn a_parallel_scan_finds_what_one_thread_finds() {
        let mut index = VectorIndex::new(8);
        let mut state = 7u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        for pk in 0..(PARALLEL_MIN_ENTRIES as i64 + 5_000) {
            let windows: Vec<Vec<f32>> = (0..1 + pk % 3)
                .map(|_| unit(&(0..8).map(|_| next()).collect::<Vec<_>>()))
                .collect();
            let session = if pk % 2 == 0 { "even" } else { "odd" };
            index.add(meta(pk, session, None, 1), &windows).unwrap();
        }
        let query = unit(&[0.3, -0.1, 0.5, 0.2, -0.4, 0.1, 0.0, 0.6]);
        for filter in [
            IndexFilter::default(),
            IndexFilter {
                session_id: Some("odd"),
                ..IndexFilter::default()
            },
        ] {
            let parallel = index.search(&query, &filter, 25);
            let pass = index.resolve(&filter).unwrap();
            let (q, q_scale) = quantize(&query);
            let (mut single, _) = index.scan(&index.entries, &q, q_scale, &pass, 25, false);
            single.sort();
            let single: Vec<(i64, f32)> = single.into_iter().map(|s| (s.pk, s.score)).collect();
            assert_eq!(parallel, single);
            assert_eq!(parallel.len(), 25);
        }
    }

    #[test]
    fn a_sample_spans_the_scope_and_respects_the_filter() {
        let mut index = VectorIndex::new(2);
        for pk in 0..100 {
            let session = if pk % 2 == 0 { "even" } else { "odd" };
            let v = unit(&[1.0, pk as f32 / 10.0]);
            index.add(meta(pk, session, None, 0), &[v]).unwrap();
        }
        let sampled = |filter: &IndexFilter<'_>, query: &[f32], max: usize| {
            index.search_sampled(query, filter, 3, 1, max)
        };
        let all = IndexFilter::default();
        assert_eq!(sampled(&all, &[1.0, 0.0], 1000).sample.len(), 100);
        let ten = sampled(&all, &[1.0, 0.0], 10);
        assert_eq!((ten.scope, ten.sample.len()), (100, 10));
        // Evenly spaced: from the first episode to near the last.
        assert!(
            ten.sample[0] > 0.99 && ten.sample[9] < 0.2,
            "{:?}",
            ten.sample
        );
        // The hits are those of a plain search.
        assert_eq!(ten.hits, index.search(&[1.0, 0.0], &all, 3));
        let odd = IndexFilter {
            session_id: Some("odd"),
            ..IndexFilter::default()
        };
        let odd = sampled(&odd, &[1.0, 0.0], 1000);
        assert_eq!((odd.scope, odd.sample.len()), (50, 50));
        assert!(odd.hits.iter().all(|(pk, _)| pk % 2 == 1), "{:?}", odd.hits);
        let sample_only = index.search_sampled(&[1.0, 0.0], &all, 0, 1, 10);
        assert_eq!(sample_only.hits, []);
        assert_eq!(
            sample_only.sample, ten.sample,
            "no hits asked, the same sample"
        );
        let none = sampled(&all, &[1.0, 0.0], 0);
        assert_eq!((none.scope, none.sample.len(), none.hits.len()), (0, 0, 3));
        assert_eq!(
            sampled(&all, &[1.0], 10),
            SampledScan::default(),
            "wrong width"
        );
    }

    #[test]
    fn a_parallel_sample_is_the_single_thread_sample() {
        let mut index = VectorIndex::new(2);
        for pk in 0..(PARALLEL_MIN_ENTRIES as i64 + 777) {
            let v = unit(&[1.0, (pk % 97) as f32 / 10.0]);
            index.add(meta(pk, "s", None, 0), &[v]).unwrap();
        }
        let filter = IndexFilter::default();
        let one = index.search_sampled(&[0.6, 0.8], &filter, 5, 1, 300);
        let four = index.search_sampled(&[0.6, 0.8], &filter, 5, 4, 300);
        assert_eq!(one, four);
        assert_eq!(one.scope, PARALLEL_MIN_ENTRIES + 777);
        assert!(
            one.sample.len() <= 300 && one.sample.len() > 250,
            "{}",
            one.sample.len()
        );
    }

    #[test]
    fn best_cosine_rescores_every_window_with_only_the_rows_rounding() {
        let mut index = VectorIndex::new(4);
        let windows = [unit(&[0.9, 0.1, 0.3, -0.2]), unit(&[0.1, 0.8, -0.5, 0.3])];
        index.add(meta(7, "s", None, 1), &windows).unwrap();
        let query = unit(&[0.2, 0.9, -0.3, 0.1]);
        let exact = windows
            .iter()
            .map(|w| w.iter().zip(&query).map(|(a, b)| a * b).sum::<f32>())
            .fold(f32::NEG_INFINITY, f32::max);
        let rescored = index.best_cosine(7, &query).unwrap();
        assert!((rescored - exact).abs() < 5e-3, "{rescored} vs {exact}");
        // The second window is the better one; the first alone would score far lower.
        assert!(rescored > 0.9, "{rescored}");
        assert_eq!(index.best_cosine(8, &query), None);
        assert_eq!(index.best_cosine(7, &query[..3]), None);
    }

    #[test]
    fn episodes_straddling_blocks_are_scored_on_all_windows() {
        let mut index = VectorIndex::new(2);
        let off = unit(&[0.0, 1.0]);
        for pk in 0..(BLOCK_ROWS as i64 - 1) {
            index
                .add(meta(pk, "s", None, 0), std::slice::from_ref(&off))
                .unwrap();
        }
        // Rows BLOCK_ROWS-1 (block 0) and BLOCK_ROWS (block 1): the match is in block 0.
        index
            .add(meta(-1, "s", None, 0), &[unit(&[1.0, 0.0]), off.clone()])
            .unwrap();
        let hits = index.search(&unit(&[1.0, 0.0]), &IndexFilter::default(), 1);
        assert_eq!(hits[0].0, -1);
        assert!(hits[0].1 > 0.99);
        assert_eq!(index.rows(), BLOCK_ROWS + 1);
    }

    #[test]
    fn bad_windows_are_refused_and_duplicates_ignored() {
        let mut index = VectorIndex::new(2);
        assert!(index.add(meta(1, "s", None, 0), &[]).is_err());
        assert!(index.add(meta(1, "s", None, 0), &[vec![1.0]]).is_err());
        assert!(
            index
                .add(meta(1, "s", None, 0), &[vec![f32::NAN, 0.0]])
                .is_err()
        );
        assert_eq!(index.len(), 0);
        assert!(index.add(meta(1, "s", None, 0), &[vec![1.0, 0.0]]).unwrap());
        assert!(!index.add(meta(1, "s", None, 0), &[vec![0.0, 1.0]]).unwrap());
        assert_eq!((index.len(), index.rows()), (1, 1));
        let mean = index.mean_vector(1).unwrap();
        assert!((mean[0] - 1.0).abs() < 0.01 && mean[1].abs() < 0.01);
    }
}
