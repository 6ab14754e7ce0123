//! Downloading a checkpoint from the Hugging Face Hub (or any server with its URL layout) into
//! the Hugging Face cache with `hf-hub`, reporting progress, and verifying what arrived.
//!
//! Files are fetched one by one, small ones first and the weights last; optional
//! sentence-transformers files may be absent. `hf-hub` writes each file to `*.incomplete` and
//! renames it into the content-addressed blob store only when the body ended, but it streams
//! whatever body the server sends, so every file is then checked against its ETag (the SHA-256
//! of an LFS file, the git blob SHA-1 of a small one); a mismatch deletes the blob and its
//! snapshot link, so a corrupt or truncated file is never left where a later lookup would accept
//! it.
//!
//! Deliberately not here: deciding whether to download (`resolve`), loading the model.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hf_hub::progress::{DownloadEvent, ProgressEvent, ProgressHandler};
use hf_hub::{HFClientBuilder, HFError};
use sha1::Sha1;
use sha2::{Digest, Sha256};

use super::checkpoint::{OPTIONAL_FILES, REQUIRED_FILES};
use crate::error::{Error, ErrorKind, Result};

/// Progress of a download, reported per file as bytes arrive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadProgress {
    /// The file's path in the repository (`model.safetensors`).
    pub file: String,
    /// Bytes of this file received so far.
    pub bytes_done: u64,
    /// The file's size, or 0 when the server did not say.
    pub bytes_total: u64,
}

/// A progress callback; called from a background thread, it must return quickly.
pub type ProgressFn = Arc<dyn Fn(&DownloadProgress) + Send + Sync>;

/// Where and how to download from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadSource {
    /// The Hub's base URL (`https://huggingface.co`, or `HF_ENDPOINT`).
    pub endpoint: String,
    /// Retries of a request that failed transiently (connection refused, 5xx), with exponential
    /// back-off. Default 3.
    pub max_retries: usize,
}

impl DownloadSource {
    /// A source at `endpoint` with default retries.
    pub fn new(endpoint: impl Into<String>) -> DownloadSource {
        DownloadSource {
            endpoint: endpoint.into(),
            max_retries: 3,
        }
    }
}

struct ProgressAdapter(ProgressFn);

impl ProgressHandler for ProgressAdapter {
    fn on_progress(&self, event: &ProgressEvent) {
        if let ProgressEvent::Download(DownloadEvent::Progress { files }) = event {
            for file in files {
                (self.0)(&DownloadProgress {
                    file: file.filename.clone(),
                    bytes_done: file.bytes_completed,
                    bytes_total: file.total_bytes,
                });
            }
        }
    }
}

/// Downloads `repo` at `revision` into the hub cache `cache` and returns the snapshot directory.
///
/// # Errors
/// [`ErrorKind::ModelUnavailable`] when the endpoint is invalid or unreachable, a required file
/// is missing, a request fails, a body is cut off, or a file does not match its ETag.
pub(crate) fn download_snapshot(
    source: &DownloadSource,
    cache: &Path,
    repo: &str,
    revision: &str,
    progress: Option<ProgressFn>,
) -> Result<PathBuf> {
    let (owner, name) = repo.split_once('/').unwrap_or(("", repo));
    let client = HFClientBuilder::new()
        .endpoint(source.endpoint.clone())
        .cache_dir(cache)
        .retry_max_attempts(source.max_retries)
        .build_sync()
        .map_err(|err| {
            unavailable(format!(
                "cannot download {repo}: {} is not a usable endpoint; set HF_ENDPOINT to the Hub's URL",
                source.endpoint
            ))
            .with_source(err)
        })?;
    let model = client.model(owner, name);
    let progress = progress.map(|f| hf_hub::progress::Progress::new(ProgressAdapter(f)));

    // Small files first: a wrong repository or revision fails before the large download.
    let files = ["config.json", "tokenizer.json"]
        .into_iter()
        .map(|f| (f, true))
        .chain(OPTIONAL_FILES.into_iter().map(|f| (f, false)))
        .chain([("model.safetensors", true)]);

    let mut snapshot: Option<PathBuf> = None;
    for (file, required) in files {
        let fetched = model
            .download_file()
            .filename(file)
            .revision(revision)
            .maybe_progress(progress.clone())
            .send();
        let path = match fetched {
            Ok(path) => path,
            Err(HFError::EntryNotFound { .. }) if !required => {
                // Recorded as the Hub's own clients do, so the snapshot reads as complete: an
                // optional file that is simply absent is not one never fetched.
                if let Some(dir) = &snapshot {
                    mark_absent(dir, file)?;
                }
                continue;
            }
            Err(err) => return Err(download_error(err, repo, revision, file, &source.endpoint)),
        };
        verify(&path, file, &source.endpoint)?;
        if snapshot.is_none() {
            // Each file's path is snapshots/<commit>/<file>; nested files sit one level deeper.
            let depth = file.matches('/').count() + 1;
            snapshot = path.ancestors().nth(depth).map(Path::to_path_buf);
        }
    }
    snapshot.ok_or_else(|| {
        Error::internal(format!("downloading {repo} produced no snapshot directory"))
    })
}

/// The marker saying that the repository has no `file` at the commit of `snapshot`
/// (`models--…/.no_exist/<commit>/<file>`, the layout of the Hub's Python client).
pub(crate) fn absent_marker(snapshot: &Path, file: &str) -> Option<PathBuf> {
    let commit = snapshot.file_name()?;
    let repo_folder = snapshot.parent()?.parent()?;
    Some(repo_folder.join(".no_exist").join(commit).join(file))
}

fn mark_absent(snapshot: &Path, file: &str) -> Result<()> {
    let Some(marker) = absent_marker(snapshot, file) else {
        return Ok(());
    };
    if let Some(parent) = marker.parent() {
        std::fs::create_dir_all(parent).map_err(|err| Error::io("create", parent, err))?;
    }
    std::fs::write(&marker, b"").map_err(|err| Error::io("write", &marker, err))
}

fn unavailable(message: String) -> Error {
    Error::new(ErrorKind::ModelUnavailable, message)
}

fn download_error(err: HFError, repo: &str, revision: &str, file: &str, endpoint: &str) -> Error {
    let message = match &err {
        HFError::EntryNotFound { .. } => format!(
            "cannot download {repo}: it has no {file} at revision {revision}; a sentence-transformers checkpoint needs {}",
            REQUIRED_FILES.join(", ")
        ),
        HFError::RepoNotFound { .. } | HFError::RevisionNotFound { .. } => format!(
            "cannot download {repo} at revision {revision} from {endpoint}: not found; check the repository id and revision"
        ),
        _ => format!(
            "cannot download {file} of {repo} from {endpoint}; check the network and try again, or set CODEOID_MODEL_DIR to a local checkpoint"
        ),
    };
    unavailable(message).with_source(err)
}

/// Checks a downloaded file against the ETag its blob is named after, deleting both the blob
/// and the snapshot link on a mismatch.
fn verify(snapshot_path: &Path, file: &str, endpoint: &str) -> Result<()> {
    let blob = std::fs::canonicalize(snapshot_path)
        .map_err(|err| Error::io("resolve", snapshot_path, err))?;
    let etag = blob
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let actual = match etag.len() {
        64 => hash_file::<Sha256>(&blob, None)?,
        40 => {
            let len = std::fs::metadata(&blob)
                .map_err(|err| Error::io("read", &blob, err))?
                .len();
            hash_file::<Sha1>(&blob, Some(format!("blob {len}\0").as_bytes()))?
        }
        // Not a content hash (a server may use any ETag): nothing to check against.
        _ => return Ok(()),
    };
    if actual.eq_ignore_ascii_case(&etag) {
        return Ok(());
    }
    // Best effort: if removal fails, the mismatch is still reported and the next download
    // overwrites the blob.
    let _ = std::fs::remove_file(snapshot_path);
    let _ = std::fs::remove_file(&blob);
    Err(unavailable(format!(
        "the {file} downloaded from {endpoint} is corrupt (its content hash is {actual}, the server announced {etag}); it was deleted, try again"
    )))
}

fn hash_file<D: Digest>(path: &Path, prefix: Option<&[u8]>) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|err| Error::io("open", path, err))?;
    let mut hasher = D::new();
    if let Some(prefix) = prefix {
        hasher.update(prefix);
    }
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut buffer)
            .map_err(|err| Error::io("read", path, err))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
