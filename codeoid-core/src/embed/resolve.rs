//! Where the embedding model comes from, in order: an explicit directory, `CODEOID_MODEL_DIR`,
//! the Hugging Face cache, then a download of [`DEFAULT_MODEL_REPO`] into that cache.
//!
//! Every input is an explicit field of [`ModelLocator`]; [`ModelLocator::from_env`] is the only
//! place that reads environment variables, through [`ModelLocator::from_vars`], so tests (and
//! embedders of the library) never race on the process environment.
//!
//! Invariants: a directory is returned only when every required checkpoint file is in it (a
//! half-downloaded snapshot is never accepted); a configured directory that is broken is an
//! error, never silently skipped for a different model; [`ModelLocator::locate`] never touches
//! the network, so it is the cheap "is a model available" check.
//!
//! Deliberately not here: the download itself (`download`), loading the model (`Embedder`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::checkpoint::{OPTIONAL_FILES, check_complete};
use super::download::{DownloadSource, ProgressFn, absent_marker, download_snapshot};
use super::embedder::{Embedder, EmbedderOptions};
use crate::error::{Error, ErrorKind, Result};

/// The model downloaded when none is configured or cached.
pub const DEFAULT_MODEL_REPO: &str = "BAAI/bge-small-en-v1.5";

/// The environment variable naming a checkpoint directory.
pub const MODEL_DIR_ENV: &str = "CODEOID_MODEL_DIR";

/// The Hub's public endpoint, used when `HF_ENDPOINT` is not set.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Where a resolved model was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelSource {
    /// The directory the caller passed.
    Explicit,
    /// The directory in `CODEOID_MODEL_DIR`.
    Env,
    /// A snapshot already in the Hugging Face cache.
    HfCache,
    /// A snapshot downloaded just now into the Hugging Face cache.
    Downloaded,
}

/// A complete checkpoint directory and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedModel {
    /// The checkpoint directory (every required file present).
    pub dir: PathBuf,
    /// Where it came from.
    pub source: ModelSource,
    /// The repository id when known (Hugging Face cache and downloads).
    pub repo: Option<String>,
}

impl ResolvedModel {
    /// Loads the model with default options, naming it after its repository when known.
    ///
    /// # Errors
    /// As [`Embedder::load_with`].
    pub fn load(&self) -> Result<Embedder> {
        let options = EmbedderOptions {
            name: self.repo.clone(),
            ..EmbedderOptions::default()
        };
        Embedder::load_with(&self.dir, options)
    }
}

/// The inputs of model resolution. Build one with [`ModelLocator::from_env`] and override fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelLocator {
    /// A directory the caller names (a CLI flag, a config file). Tried first.
    pub explicit_dir: Option<PathBuf>,
    /// The value of `CODEOID_MODEL_DIR`. Tried second.
    pub env_dir: Option<PathBuf>,
    /// The Hugging Face hub cache (`HF_HUB_CACHE`, else `$HF_HOME/hub`, else
    /// `~/.cache/huggingface/hub`). Searched third, and where downloads go.
    pub hf_cache: Option<PathBuf>,
    /// The repository looked up in the cache and downloaded: `org/name`.
    pub repo: String,
    /// The revision (branch, tag or commit) of `repo`.
    pub revision: String,
    /// Where to download from; `None` never downloads (offline).
    pub download: Option<DownloadSource>,
}

impl ModelLocator {
    /// A locator configured from the process environment: `CODEOID_MODEL_DIR`, `HF_HUB_CACHE`,
    /// `HUGGINGFACE_HUB_CACHE`, `HF_HOME`, `XDG_CACHE_HOME`, `HOME`, `HF_ENDPOINT` and
    /// `HF_HUB_OFFLINE` (`1` disables downloads).
    pub fn from_env() -> ModelLocator {
        ModelLocator::from_vars(|name| std::env::var_os(name))
    }

    /// A locator configured from `var`, a lookup with the semantics of `std::env::var_os`.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> ModelLocator {
        let non_empty = |name: &str| var(name).filter(|v| !v.is_empty());
        let hf_cache = non_empty("HF_HUB_CACHE")
            .or_else(|| non_empty("HUGGINGFACE_HUB_CACHE"))
            .map(PathBuf::from)
            .or_else(|| non_empty("HF_HOME").map(|home| PathBuf::from(home).join("hub")))
            .or_else(|| {
                non_empty("XDG_CACHE_HOME").map(|c| PathBuf::from(c).join("huggingface/hub"))
            })
            .or_else(|| non_empty("HOME").map(|h| PathBuf::from(h).join(".cache/huggingface/hub")));
        let offline = non_empty("HF_HUB_OFFLINE").is_some_and(|v| {
            matches!(
                v.to_string_lossy().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        });
        let endpoint = non_empty("HF_ENDPOINT")
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned());
        ModelLocator {
            explicit_dir: None,
            env_dir: non_empty(MODEL_DIR_ENV).map(PathBuf::from),
            hf_cache,
            repo: DEFAULT_MODEL_REPO.to_owned(),
            revision: "main".to_owned(),
            download: (!offline).then(|| DownloadSource::new(endpoint)),
        }
    }

    /// Finds a complete checkpoint without any network access: the cheap check for "is a model
    /// available" (memory falls back to lexical retrieval when it fails).
    ///
    /// # Errors
    /// [`ErrorKind::ModelUnavailable`] when nothing usable is found, with a message that says
    /// where codeoid looked and how to provide a model; also when the explicit directory or
    /// `CODEOID_MODEL_DIR` is set but incomplete (it is not skipped in favour of another model).
    pub fn locate(&self) -> Result<ResolvedModel> {
        if let Some(dir) = &self.explicit_dir {
            check_complete(dir)
                .map_err(|err| configured_dir_error(err, "the model directory given"))?;
            return Ok(ResolvedModel {
                dir: dir.clone(),
                source: ModelSource::Explicit,
                repo: None,
            });
        }
        if let Some(dir) = &self.env_dir {
            check_complete(dir).map_err(|err| configured_dir_error(err, MODEL_DIR_ENV))?;
            return Ok(ResolvedModel {
                dir: dir.clone(),
                source: ModelSource::Env,
                repo: None,
            });
        }
        if let Some(dir) = self
            .hf_cache
            .as_deref()
            .and_then(|cache| self.cached_snapshot(cache))
        {
            return Ok(ResolvedModel {
                dir,
                source: ModelSource::HfCache,
                repo: Some(self.repo.clone()),
            });
        }
        if let Some(partial) = self
            .hf_cache
            .as_deref()
            .and_then(|c| self.partial_snapshot(c))
        {
            let missing: Vec<&str> = OPTIONAL_FILES
                .into_iter()
                .filter(|f| !partial.join(f).is_file())
                .collect();
            return Err(Error::new(
                ErrorKind::ModelUnavailable,
                format!(
                    "the cached snapshot of {} at {} has no {} (another library fetched the \
                     weights alone?), so its pooling and limits are unknown; allow codeoid to \
                     download the missing files, or set {MODEL_DIR_ENV} to a complete \
                     sentence-transformers checkpoint",
                    self.repo,
                    partial.display(),
                    missing.join(", ")
                ),
            ));
        }
        let cache = self.hf_cache.as_ref().map_or_else(
            || "no Hugging Face cache configured".to_owned(),
            |c| c.display().to_string(),
        );
        Err(Error::new(
            ErrorKind::ModelUnavailable,
            format!(
                "no embedding model found ({MODEL_DIR_ENV} is not set and {} is not in the Hugging Face cache at {cache}); set {MODEL_DIR_ENV} to a sentence-transformers checkpoint or allow codeoid to download it",
                self.repo
            ),
        ))
    }

    /// Whether [`ModelLocator::locate`] succeeds.
    pub fn is_available(&self) -> bool {
        self.locate().is_ok()
    }

    /// Finds the model like [`ModelLocator::locate`], downloading `repo` into the Hugging Face
    /// cache when it is not there and downloads are allowed. `progress` is called as bytes
    /// arrive (from a background thread; it must not block).
    ///
    /// # Errors
    /// [`ErrorKind::ModelUnavailable`] when nothing is found and the download is disabled or
    /// fails (not found, server error, interrupted, corrupt); nothing partial is left where
    /// [`ModelLocator::locate`] would accept it.
    pub fn resolve(&self, progress: Option<ProgressFn>) -> Result<ResolvedModel> {
        let missing = match self.locate() {
            Ok(found) => return Ok(found),
            Err(err) if self.explicit_dir.is_some() || self.env_dir.is_some() => return Err(err),
            Err(err) => err,
        };
        let (Some(source), Some(cache)) = (&self.download, &self.hf_cache) else {
            return Err(missing);
        };
        let dir = download_snapshot(source, cache, &self.repo, &self.revision, progress)?;
        check_complete(&dir)?;
        Ok(ResolvedModel {
            dir,
            source: ModelSource::Downloaded,
            repo: Some(self.repo.clone()),
        })
    }

    /// The newest complete snapshot of `repo` in `cache`: the one `refs/{revision}` names,
    /// else any complete one (a cache filled by another tool may lack refs). Complete means the
    /// required files, and each sentence-transformers file either present or recorded as absent
    /// from the repository (`.no_exist`): a snapshot that another library filled with the
    /// weights alone (`transformers`' `AutoModel`) lacks `1_Pooling/config.json` only because
    /// nothing fetched it, and reading it would pool bge by the mean instead of its CLS token.
    fn cached_snapshot(&self, cache: &Path) -> Option<PathBuf> {
        let folder = cache.join(format!("models--{}", self.repo.replace('/', "--")));
        let snapshots = folder.join("snapshots");
        let by_ref = std::fs::read_to_string(folder.join("refs").join(&self.revision))
            .ok()
            .map(|commit| snapshots.join(commit.trim()));
        let by_commit = Some(snapshots.join(&self.revision));
        if let Some(dir) = by_ref
            .into_iter()
            .chain(by_commit)
            .find(|dir| snapshot_complete(dir))
        {
            return Some(dir);
        }
        let mut complete: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&snapshots)
            .ok()?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|dir| snapshot_complete(dir))
            .map(|dir| (modified(&dir), dir))
            .collect();
        complete.sort();
        complete.pop().map(|(_, dir)| dir)
    }

    /// A snapshot of `repo` in `cache` with the required files but not the sentence-transformers
    /// ones (see [`ModelLocator::cached_snapshot`]), for a precise error.
    fn partial_snapshot(&self, cache: &Path) -> Option<PathBuf> {
        let snapshots = cache
            .join(format!("models--{}", self.repo.replace('/', "--")))
            .join("snapshots");
        std::fs::read_dir(snapshots)
            .ok()?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .find(|dir| check_complete(dir).is_ok())
    }
}

/// Whether Hugging Face cache snapshot `dir` holds a whole checkpoint (see
/// [`ModelLocator::cached_snapshot`]).
fn snapshot_complete(dir: &Path) -> bool {
    check_complete(dir).is_ok()
        && OPTIONAL_FILES.iter().all(|file| {
            dir.join(file).is_file() || absent_marker(dir, file).is_some_and(|m| m.exists())
        })
}

fn modified(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(std::time::UNIX_EPOCH)
}

fn configured_dir_error(err: Error, origin: &str) -> Error {
    Error::new(
        ErrorKind::ModelUnavailable,
        format!("{origin} is not usable: {}", err.message()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn locator(vars: &[(&str, &str)]) -> ModelLocator {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).into()))
            .collect();
        ModelLocator::from_vars(|name| map.get(name).cloned())
    }

    #[test]
    fn cache_location_follows_the_hugging_face_precedence() {
        let all = [
            ("HF_HUB_CACHE", "/a"),
            ("HF_HOME", "/b"),
            ("XDG_CACHE_HOME", "/c"),
            ("HOME", "/d"),
        ];
        assert_eq!(locator(&all).hf_cache, Some(PathBuf::from("/a")));
        assert_eq!(locator(&all[1..]).hf_cache, Some(PathBuf::from("/b/hub")));
        assert_eq!(
            locator(&all[2..]).hf_cache,
            Some(PathBuf::from("/c/huggingface/hub"))
        );
        assert_eq!(
            locator(&all[3..]).hf_cache,
            Some(PathBuf::from("/d/.cache/huggingface/hub"))
        );
        assert_eq!(locator(&[]).hf_cache, None);
    }

    #[test]
    fn env_sets_the_model_dir_endpoint_and_offline_mode() {
        let env = locator(&[
            (MODEL_DIR_ENV, "/models/x"),
            ("HF_ENDPOINT", "http://127.0.0.1:9"),
        ]);
        assert_eq!(env.env_dir, Some(PathBuf::from("/models/x")));
        assert_eq!(
            env.download.map(|d| d.endpoint),
            Some("http://127.0.0.1:9".to_owned())
        );
        assert_eq!(
            locator(&[]).download.map(|d| d.endpoint),
            Some(DEFAULT_ENDPOINT.to_owned())
        );
        assert_eq!(locator(&[("HF_HUB_OFFLINE", "1")]).download, None);
        assert_eq!(
            locator(&[(MODEL_DIR_ENV, "")]).env_dir,
            None,
            "empty means unset"
        );
        assert_eq!(locator(&[]).repo, DEFAULT_MODEL_REPO);
    }
}
