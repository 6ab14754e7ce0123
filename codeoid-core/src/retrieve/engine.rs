//! [`Retriever`]: hybrid recall over one workspace. It owns the embedding worker (and through
//! it the vector index) and runs the two candidate channels, then fuses them (DESIGN §2).
//!
//! One recall:
//! 1. BM25 candidates from the store (a lexical search planned within the config's budget,
//!    filters inside SQL), on a second thread, while this thread embeds the query and scans the
//!    vector index (filters in memory; the path filter resolved to episode keys by one indexed
//!    query). Top K from each channel.
//! 2. The union is completed: headers of vector-only candidates, their BM25 (looked up among
//!    the scores the lexical pass computed anyway), the cosine of every candidate from the
//!    index's int8 rows with the query in f32 (within ~0.01 of the f32 cosine; no store reads),
//!    and paths when the query names any.
//! 3. Fusion ranks the union; the best `limit` are read whole, passing over a subagent's answer
//!    and its parent's episode holding it when the other is already a hit, and showing a
//!    command's raw output as the call that names it or holds it (see `duplicates`).
//! 4. Each hit is judged ([`super::relevance`]): the query terms its text holds and its cosine
//!    against a sample of the scope's (taken during the vector scan); a hit with neither worth
//!    the name is weak.
//!
//! Without a model (none found, still downloading, disabled) the vector channel is empty and
//! every `vec` is 0: BM25, recency and paths still rank. An episode recorded a moment ago and
//! not yet embedded likewise has `vec` 0 until the worker reaches it (`flush` waits for that).
//!
//! Deliberately not here: argument parsing and text for models (the tools).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use chrono::Utc;

use super::config::{EmbeddingConfig, RetrievalConfig};
use super::duplicates::{SubagentAnswers, namer_below, raw_output_named_by};
use super::fusion::{Candidate, rank};
use super::paths::QueryPaths;
use super::query::{Hit, RecallQuery};
use super::relevance::{BASELINE_SAMPLE, Baseline, Relevance, judge};
use super::vector_index::IndexFilter;
use super::worker::{EmbeddingStatus, Worker};
use crate::canonical::PathAccess;
use crate::embed::Embedder;
use crate::error::{Error, ErrorKind, Result};
use crate::index::{ClusterEpisode, ClusterInput};
use crate::store::{LexicalFilters, LexicalMatches, Store, Workspace};

/// Hybrid recall over one workspace of a store.
pub struct Retriever {
    store: Arc<Store>,
    workspace: Workspace,
    config: RetrievalConfig,
    embedding: EmbeddingConfig,
    /// Started on first use, so commands that only read the timeline never load a model.
    worker: OnceLock<Worker>,
}

impl std::fmt::Debug for Retriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retriever")
            .field("workspace", &self.workspace.id())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What the vector channel found.
struct VectorCandidates {
    /// The query vector, when a model is ready.
    query: Option<Vec<f32>>,
    /// `(episode key, approximate cosine)`, best first.
    hits: Vec<(i64, f32)>,
    /// The episodes in scope and the approximate cosines of a sample of them (see
    /// `relevance`).
    sample: (usize, Vec<f32>),
}

/// How the query vector is obtained.
enum QueryVector<'a> {
    /// Embed the query text with the worker's model, when it is ready.
    Embed,
    /// Already embedded by the caller with the same model.
    Given(&'a [f32]),
}

impl Retriever {
    /// Retrieval for `workspace`. The embedding worker starts on first use (a recording, a
    /// recall, a flush, a status or warnings call): it checks for the model without the network
    /// and then loads the model and the stored vectors on its own thread.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] for an invalid config.
    pub fn new(
        store: Arc<Store>,
        workspace: Workspace,
        config: RetrievalConfig,
        embedding: EmbeddingConfig,
    ) -> Result<Retriever> {
        config.validate()?;
        embedding.validate()?;
        Ok(Retriever {
            store,
            workspace,
            config,
            embedding,
            worker: OnceLock::new(),
        })
    }

    fn worker(&self) -> &Worker {
        self.worker.get_or_init(|| {
            Worker::start(
                Arc::clone(&self.store),
                self.workspace.id(),
                self.embedding.clone(),
            )
        })
    }

    /// The ranking settings.
    pub fn config(&self) -> &RetrievalConfig {
        &self.config
    }

    /// Tells the worker that episodes were recorded (it embeds them soon).
    pub fn notify_recorded(&self) {
        self.worker().wake();
    }

    /// The most relevant episodes for `query`, best first, each with its four signals.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] for a limit out of range or an empty time range;
    /// database errors.
    pub fn recall(&self, query: &RecallQuery) -> Result<Vec<Hit>> {
        self.recall_with(query, QueryVector::Embed)
    }

    /// [`Retriever::recall`] with a query vector the caller already computed with this
    /// retriever's model ([`Retriever::embedder`]`.embed_query`): for benchmarks and for callers
    /// that embed once and search several times.
    ///
    /// # Errors
    /// As [`Retriever::recall`], and [`crate::ErrorKind::InvalidInput`] when the vector's width
    /// is not the model's.
    pub fn recall_embedded(&self, query: &RecallQuery, vector: &[f32]) -> Result<Vec<Hit>> {
        self.recall_with(query, QueryVector::Given(vector))
    }

    /// The loaded embedding model, after waiting for it to load; `None` when recall is lexical.
    pub fn embedder(&self) -> Option<Arc<Embedder>> {
        self.worker().ready_embedder()
    }

    /// Waits until every episode of the workspace recorded before the call is embedded and
    /// indexed, or embedding is impossible (no model, disabled). During a model download this
    /// waits for the download.
    ///
    /// # Errors
    /// A database error reading the newest episode.
    pub fn flush(&self) -> Result<()> {
        self.worker().flush(None, &mut || true).map(|_| ())
    }

    /// [`Retriever::flush`], giving up after `timeout`. Returns `false` on timeout.
    ///
    /// # Errors
    /// As [`Retriever::flush`].
    pub fn flush_timeout(&self, timeout: Duration) -> Result<bool> {
        self.worker().flush(Some(timeout), &mut || true)
    }

    /// [`Retriever::flush`], giving up after `timeout` (`None`: never) or as soon as
    /// `keep_waiting`, asked about every 100 ms while it waits, returns `false`. Returns `false`
    /// when it gave up.
    ///
    /// # Errors
    /// As [`Retriever::flush`].
    pub fn flush_while(
        &self,
        timeout: Option<Duration>,
        keep_waiting: &mut dyn FnMut() -> bool,
    ) -> Result<bool> {
        self.worker().flush(timeout, keep_waiting)
    }

    /// Warnings, each once: why recall is lexical only, episodes the model failed on, store
    /// errors the worker is retrying.
    pub fn warnings(&self) -> Vec<String> {
        self.worker().warnings()
    }

    /// The embedding worker's progress.
    pub fn status(&self) -> EmbeddingStatus {
        self.worker().status()
    }

    /// The `max` most recent embedded episodes as clustering input (one vector per episode:
    /// the mean of its windows), or an empty input when nothing is embedded.
    ///
    /// # Errors
    /// A database error reading summaries and paths.
    pub fn cluster_input(&self, max: usize) -> Result<ClusterInput> {
        // (dimension, (key, mean window vector) of the most recent episodes)
        type Recent = (usize, Vec<(i64, Vec<f32>)>);
        // The vectors are loaded with the model: wait for that as recall does (not for a
        // download), or the first block of a freshly opened memory would have no clusters and
        // change a few turns later, breaking the prompt cache.
        let _ = self.worker().ready_embedder();
        let picked: Option<Recent> = self.worker().with_index(|index| {
            index.map(|index| {
                let vectors = index
                    .most_recent(max)
                    .into_iter()
                    .filter_map(|pk| index.mean_vector(pk).map(|v| (pk, v)))
                    .collect();
                (index.dim(), vectors)
            })
        });
        let Some((dim, vectors)) = picked.filter(|(_, v)| !v.is_empty()) else {
            return Ok(ClusterInput::none());
        };
        let ws = self.workspace.id();
        let pks: Vec<i64> = vectors.iter().map(|(pk, _)| *pk).collect();
        let headers = self.store.headers_by_pk(ws, &pks)?;
        let ids: Vec<&str> = headers.values().map(|h| h.id.as_str()).collect();
        let paths = self.store.episode_paths(ws, &ids)?;
        let mut input = ClusterInput::new(dim)?;
        for (pk, vector) in &vectors {
            let Some(header) = headers.get(pk) else {
                continue;
            };
            let mut relative: Vec<String> = Vec::new();
            // Labels are made of summary words; the directories above the workspace
            // (`/home/<user>/projects/…` in `Read(/home/…/src/a.rs)`) would win them, being in
            // every summary of a topic. Summaries are labelled with paths as the workspace
            // sees them: the root each given path was under is cut, even from a summary that
            // cuts the path short.
            let mut summary = header.summary.clone();
            for path in paths.get(&header.id).into_iter().flatten() {
                // A search's pattern or scope (`**/mix.exs`, `.`) is not a file of the topic.
                if path.access != PathAccess::Search && !relative.contains(&path.relative) {
                    relative.push(path.relative.clone());
                }
                let root = path.given.strip_suffix(path.relative.as_str());
                if let Some(root) = root.filter(|r| r.len() > 1 && r.ends_with('/')) {
                    summary = summary.replace(root, "");
                }
            }
            // A vector the index accepted is finite and of the right width.
            input.push(
                vector,
                ClusterEpisode {
                    summary,
                    paths: relative,
                    time: header.created_at,
                },
            )?;
        }
        Ok(input)
    }

    fn recall_with(&self, query: &RecallQuery, vector: QueryVector<'_>) -> Result<Vec<Hit>> {
        query.validate()?;
        let now = query.as_of.unwrap_or_else(Utc::now);
        let ws = self.workspace.id();
        let filters = &query.filters;
        let query_paths = QueryPaths::new(self.workspace.root(), &query.text, &filters.paths);
        let filter_paths: Vec<String> = filters
            .paths
            .iter()
            .map(|p| self.workspace.relativize(p))
            .collect();
        let lexical_filters = LexicalFilters {
            session_id: filters.session_id.clone(),
            exclude_session_id: filters.exclude_session_id.clone(),
            exclude_live: filters.exclude_live.clone(),
            tool_name: filters.tool_name.clone(),
            since: filters.since,
            until: filters.until,
            paths: filter_paths.clone(),
        };
        let k = self.config.candidates;
        let budget = self.config.lexical_budget;
        let _running = self.worker().query_guard();
        let lexical_done = AtomicBool::new(false);
        let (lexical, vector) = std::thread::scope(|scope| {
            let lexical = scope.spawn(|| {
                let matches =
                    self.store
                        .lexical_matches(ws, &query.text, &lexical_filters, k, budget);
                lexical_done.store(true, Ordering::Release);
                matches
            });
            let vector = self.vector_channel(query, vector, &filter_paths, k, &lexical_done);
            let lexical = lexical
                .join()
                .unwrap_or_else(|_| Err(Error::internal("the lexical search thread panicked")));
            (lexical, vector)
        });
        let LexicalMatches {
            hits: lexical_hits,
            scores: lexical_scores,
            mut counts,
        } = lexical?;
        let VectorCandidates {
            query: query_vector,
            hits: vector_hits,
            sample,
        } = vector?;

        // The union, in a stable order: lexical candidates, then vector-only ones, with their
        // episode keys alongside. Neither channel returns rotation events (the lexical search
        // skips them before its cut; the worker never indexes them).
        let mut candidates: Vec<Candidate> =
            Vec::with_capacity(lexical_hits.len() + vector_hits.len());
        let mut keys: Vec<i64> = Vec::with_capacity(candidates.capacity());
        let mut position: HashMap<String, usize> = HashMap::new();
        for (pk, hit) in lexical_hits {
            position.insert(hit.header.id.clone(), candidates.len());
            keys.push(pk);
            candidates.push(Candidate {
                header: hit.header,
                cosine: None,
                bm25: Some(hit.bm25),
                paths: Vec::new(),
            });
        }
        let vector_pks: Vec<i64> = vector_hits.iter().map(|(pk, _)| *pk).collect();
        let mut headers = self.store.headers_by_pk(ws, &vector_pks)?;
        // The lexical pass scored every match of its plan, so a vector-only candidate's BM25 is
        // a lookup (absent: its words do not match the planned terms).
        let wanted: HashSet<i64> = vector_pks.iter().copied().collect();
        let vector_bm25: HashMap<i64, f64> = lexical_scores
            .into_iter()
            .filter(|(pk, _)| wanted.contains(pk))
            .collect();
        for (pk, _) in &vector_hits {
            let Some(header) = headers.remove(pk) else {
                continue;
            };
            if position.contains_key(&header.id) {
                continue;
            }
            position.insert(header.id.clone(), candidates.len());
            keys.push(*pk);
            candidates.push(Candidate {
                header,
                cosine: None,
                bm25: vector_bm25.get(pk).copied(),
                paths: Vec::new(),
            });
        }
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(query_vector) = &query_vector {
            // Rescored from the index's rows with the query in f32: no store reads (reading
            // the candidates' f32 windows back was ~4 ms of a 100k recall, page by page).
            self.worker().with_index(|index| {
                if let Some(index) = index {
                    for (candidate, pk) in candidates.iter_mut().zip(&keys) {
                        candidate.cosine = index.best_cosine(*pk, query_vector).map(f64::from);
                    }
                }
            });
        }
        if !query_paths.is_empty() {
            let ids: Vec<&str> = candidates.iter().map(|c| c.header.id.as_str()).collect();
            for (id, paths) in self.store.episode_paths(ws, &ids)? {
                if let Some(&at) = position.get(&id) {
                    candidates[at].paths = paths;
                }
            }
        }
        let ranked = rank(&candidates, &query_paths, &self.config, now);
        let mut subagent_answers = SubagentAnswers::new(&self.store);
        let mut hits = Vec::with_capacity(query.limit);
        // Candidates already shown higher up: a call standing in for the raw output it names.
        let mut shown: HashSet<usize> = HashSet::new();
        for (at, first) in ranked.iter().enumerate() {
            if hits.len() == query.limit {
                break;
            }
            if shown.contains(&first.index) {
                continue;
            }
            // Replaced by a concurrent re-import since the candidates were read: not a failure.
            let mut episode = match self.store.episode(ws, &candidates[first.index].header.id) {
                Ok(episode) => episode,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            if subagent_answers.repeats_a_hit(&episode.header, &episode.content, &hits)?
                || raw_output_named_by(&episode.header, &episode.content, &hits)
            {
                continue;
            }
            let mut chosen = *first;
            // A command's raw output named by a call ranked below it: the call takes its place.
            let below = &ranked[at + 1..];
            let raw = (&episode.header, episode.content.as_str());
            if let Some((namer, named_by)) = namer_below(&self.store, ws, raw, &candidates, below)?
            {
                shown.insert(namer.index);
                (chosen, episode) = (namer, named_by);
            }
            hits.push(Hit {
                header: episode.header,
                content: episode.content,
                paths: episode.paths,
                score: chosen.score,
                components: chosen.components,
                relevance: Relevance::default(),
            });
        }
        let (scope, sample) = sample;
        let baseline = Baseline::of(scope, sample.into_iter().map(f64::from));
        judge(
            &self.store,
            &query.text,
            baseline,
            &mut counts,
            &candidates,
            &mut hits,
        )?;
        Ok(hits)
    }

    /// The vector channel: the top `k` episodes by approximate cosine after the filters.
    fn vector_channel(
        &self,
        query: &RecallQuery,
        vector: QueryVector<'_>,
        filter_paths: &[String],
        k: usize,
        lexical_done: &AtomicBool,
    ) -> Result<VectorCandidates> {
        let Some(embedder) = self.worker().ready_embedder() else {
            return Ok(VectorCandidates {
                query: None,
                hits: Vec::new(),
                sample: (0, Vec::new()),
            });
        };
        let query_vector = match vector {
            QueryVector::Embed => embedder.embed_query(&query.text)?,
            QueryVector::Given(v) if v.len() == embedder.dim() => v.to_vec(),
            QueryVector::Given(v) => {
                return Err(Error::invalid_input(format!(
                    "query vector has {} components but model {} makes {}; embed the query \
                     with Retriever::embedder",
                    v.len(),
                    embedder.model_id(),
                    embedder.dim()
                )));
            }
        };
        let path_pks: Option<HashSet<i64>> = if filter_paths.is_empty() {
            None
        } else {
            Some(
                self.store
                    .episodes_touching(self.workspace.id(), filter_paths)?,
            )
        };
        let filters = &query.filters;
        let filter = IndexFilter {
            session_id: filters.session_id.as_deref(),
            exclude_session_id: filters.exclude_session_id.as_deref(),
            exclude_live: filters
                .exclude_live
                .as_ref()
                .map(|(s, from_pk)| (s.as_str(), *from_pk)),
            tool_name: filters.tool_name.as_deref(),
            since: filters.since,
            until: filters.until,
            pks: path_pks.as_ref(),
        };
        // The scan streams memory and splits across cores; while the lexical pass still runs
        // beside it, one core is left to that pass (measured: using both then was slower).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = if lexical_done.load(Ordering::Acquire) {
            cores
        } else {
            cores.saturating_sub(1)
        };
        let (hits, sample) = self
            .worker()
            .with_index(|index| {
                index.map(|i| {
                    let scan =
                        i.search_sampled(&query_vector, &filter, k, threads, BASELINE_SAMPLE);
                    (scan.hits, (scan.scope, scan.sample))
                })
            })
            .unwrap_or_default();
        Ok(VectorCandidates {
            query: Some(query_vector),
            hits,
            sample,
        })
    }
}
