//! Downloads for real, over HTTP on loopback: a small server in this file speaks the Hub's file
//! layout (`/{org}/{name}/resolve/{revision}/{file}`, HEAD then GET, `ETag` and
//! `X-Repo-Commit` headers) and serves the test model, and can fail on purpose: a status code,
//! a body cut off mid-way, or an error page where the file should be.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use codeoid_core::ErrorKind;
use codeoid_core::embed::{
    DownloadProgress, DownloadSource, ModelLocator, ModelSource, ProgressFn,
};
use sha1::Sha1;
use sha2::{Digest, Sha256};

use super::model_dir;

const REPO: &str = "BAAI/bge-small-en-v1.5";
const COMMIT: &str = "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a";

/// What the server does wrong for one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// HEAD and GET answer with this status.
    Status(u16),
    /// GET announces the full length, sends half the body and closes the connection.
    CutBody,
    /// HEAD is right, GET answers 500 with an error page.
    ErrorPageOnGet,
}

struct ServedFile {
    bytes: Vec<u8>,
    etag: String,
}

/// The test model's files with Hub-style ETags: SHA-256 for the LFS weights, the git blob SHA-1
/// for the small files. Read once per test binary.
fn served_files() -> &'static HashMap<String, ServedFile> {
    static FILES: OnceLock<HashMap<String, ServedFile>> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = model_dir();
        [
            "config.json",
            "tokenizer.json",
            "model.safetensors",
            "1_Pooling/config.json",
            "sentence_bert_config.json",
            "config_sentence_transformers.json",
        ]
        .into_iter()
        .map(|file| {
            let bytes = std::fs::read(dir.join(file)).unwrap();
            let etag = if file.ends_with(".safetensors") {
                hex(&Sha256::digest(&bytes))
            } else {
                let mut hasher = Sha1::new();
                hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
                hasher.update(&bytes);
                hex(&hasher.finalize())
            };
            (file.to_owned(), ServedFile { bytes, etag })
        })
        .collect()
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A loopback HTTP server for the Hub layout; stops when dropped. Also used by the retrieval
/// tests (a model downloaded by the embedding worker).
pub(crate) struct HubServer {
    endpoint: String,
    faults: Arc<Mutex<HashMap<String, Fault>>>,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl HubServer {
    pub(crate) fn start() -> HubServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let faults: Arc<Mutex<HashMap<String, Fault>>> = Arc::default();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (faults, requests, stop) = (faults.clone(), requests.clone(), stop.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        // A client that hangs up early is the client's business, not a test failure.
                        let _ = serve(stream, &faults, &requests);
                    }
                }
            })
        };
        HubServer {
            endpoint,
            faults,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    fn fail(&self, file: &str, fault: Fault) {
        self.faults.lock().unwrap().insert(file.to_owned(), fault);
    }

    fn heal(&self) {
        self.faults.lock().unwrap().clear();
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for HubServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.endpoint.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(
    mut stream: TcpStream,
    faults: &Mutex<HashMap<String, Fault>>,
    requests: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" {
            break;
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    requests.lock().unwrap().push(format!("{method} {path}"));

    let prefix = format!("/{REPO}/resolve/");
    let file = path
        .strip_prefix(&prefix)
        .and_then(|rest| rest.split_once('/'))
        .map(|(_revision, file)| file.to_owned());
    let served = file.as_deref().and_then(|f| served_files().get(f));
    let fault = file
        .as_deref()
        .and_then(|f| faults.lock().unwrap().get(f).copied());
    let head = method == "HEAD";

    let Some(served) = served else {
        return respond(
            &mut stream,
            404,
            &[("X-Error-Code", "EntryNotFound")],
            b"not found",
            head,
        );
    };
    let headers = [
        ("ETag", format!("\"{}\"", served.etag)),
        ("X-Repo-Commit", COMMIT.to_owned()),
    ];
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    match fault {
        Some(Fault::Status(code)) => {
            respond(&mut stream, code, &headers, b"failure on purpose", head)
        }
        Some(Fault::ErrorPageOnGet) if !head => respond(
            &mut stream,
            500,
            &[],
            b"<html>internal server error</html>",
            false,
        ),
        Some(Fault::CutBody) if !head => {
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                served.bytes.len()
            )?;
            stream.write_all(&served.bytes[..served.bytes.len() / 2])?;
            stream.flush()?;
            stream.shutdown(Shutdown::Both)
        }
        _ => respond(&mut stream, 200, &headers, &served.bytes, head),
    }
}

fn respond(
    stream: &mut TcpStream,
    code: u16,
    headers: &[(&str, &str)],
    body: &[u8],
    head: bool,
) -> std::io::Result<()> {
    let mut text = format!(
        "HTTP/1.1 {code} {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        if code == 200 { "OK" } else { "Error" },
        body.len()
    );
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    stream.write_all(text.as_bytes())?;
    if !head {
        stream.write_all(body)?;
    }
    stream.flush()
}

pub(crate) fn locator(server: &HubServer, cache: &Path) -> ModelLocator {
    ModelLocator {
        explicit_dir: None,
        env_dir: None,
        hf_cache: Some(cache.to_path_buf()),
        repo: REPO.to_owned(),
        revision: "main".to_owned(),
        download: Some(DownloadSource {
            endpoint: server.endpoint.clone(),
            max_retries: 0,
        }),
    }
}

fn gets_of(server: &HubServer, file: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.starts_with("GET") && r.ends_with(file))
        .count()
}

#[test]
fn a_missing_model_is_downloaded_into_the_hf_cache_with_progress() {
    let server = HubServer::start();
    let cache = tempfile::tempdir().unwrap();
    let locator = locator(&server, cache.path());
    assert_eq!(
        locator.locate().unwrap_err().kind(),
        ErrorKind::ModelUnavailable
    );
    assert!(!locator.is_available());

    let seen: Arc<Mutex<Vec<DownloadProgress>>> = Arc::default();
    let progress: ProgressFn = {
        let seen = seen.clone();
        Arc::new(move |p: &DownloadProgress| seen.lock().unwrap().push(p.clone()))
    };
    let resolved = locator.resolve(Some(progress)).unwrap();
    assert_eq!(resolved.source, ModelSource::Downloaded);
    assert_eq!(resolved.repo.as_deref(), Some(REPO));
    let expected_dir = cache
        .path()
        .join("models--BAAI--bge-small-en-v1.5/snapshots")
        .join(COMMIT);
    assert_eq!(resolved.dir, expected_dir);

    let weights = served_files()["model.safetensors"].bytes.len() as u64;
    let seen = seen.lock().unwrap();
    let last = seen
        .iter()
        .rfind(|p| p.file == "model.safetensors")
        .unwrap();
    assert_eq!((last.bytes_done, last.bytes_total), (weights, weights));
    assert!(
        seen.iter()
            .filter(|p| p.file == "model.safetensors")
            .count()
            > 2,
        "progress as bytes arrive"
    );

    // The download is a real, loadable model, found in the cache next time without the network.
    let embedder = resolved.load().unwrap();
    assert_eq!(embedder.dim(), 384);
    assert!(embedder.model_id().starts_with("bge-small-en-v1.5@"));
    drop(server);
    let again = locator.locate().unwrap();
    assert_eq!(
        (again.source, again.dir),
        (ModelSource::HfCache, expected_dir)
    );
}

#[test]
fn optional_files_may_be_missing_but_required_ones_may_not() {
    let server = HubServer::start();
    server.fail("1_Pooling/config.json", Fault::Status(404));
    server.fail("config_sentence_transformers.json", Fault::Status(404));
    let cache = tempfile::tempdir().unwrap();
    let resolved = locator(&server, cache.path()).resolve(None).unwrap();
    assert!(!resolved.dir.join("1_Pooling/config.json").exists());
    assert!(resolved.dir.join("model.safetensors").is_file());
    // Their absence is recorded, so the snapshot is found complete without the network.
    drop(server);
    let server = HubServer::start();
    server.fail("config.json", Fault::Status(500));
    let found = locator(&server, cache.path()).locate().unwrap();
    assert_eq!(
        (found.source, found.dir),
        (ModelSource::HfCache, resolved.dir.clone())
    );

    let server = HubServer::start();
    server.fail("tokenizer.json", Fault::Status(404));
    let cache = tempfile::tempdir().unwrap();
    let err = locator(&server, cache.path()).resolve(None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ModelUnavailable);
    assert!(
        err.message().contains("no tokenizer.json"),
        "{}",
        err.message()
    );
    assert_eq!(
        gets_of(&server, "model.safetensors"),
        0,
        "small files fail fast, before the weights"
    );
}

#[test]
fn a_snapshot_another_library_filled_with_the_weights_alone_is_completed_first() {
    // `transformers`' AutoModel fetches config, tokenizer and weights, never the
    // sentence-transformers files: read as it is, bge would be pooled by the mean, not CLS.
    let cache = tempfile::tempdir().unwrap();
    let folder = cache.path().join("models--BAAI--bge-small-en-v1.5");
    let partial = folder.join("snapshots").join(COMMIT);
    std::fs::create_dir_all(&partial).unwrap();
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::copy(model_dir().join(file), partial.join(file)).unwrap();
    }
    std::fs::create_dir_all(folder.join("refs")).unwrap();
    std::fs::write(folder.join("refs/main"), COMMIT).unwrap();

    let server = HubServer::start();
    let locator = locator(&server, cache.path());
    let err = locator.locate().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ModelUnavailable);
    assert!(
        err.message()
            .contains("has no 1_Pooling/config.json, sentence_bert_config.json"),
        "{}",
        err.message()
    );
    let resolved = locator.resolve(None).unwrap();
    assert_eq!(resolved.source, ModelSource::Downloaded);
    assert_eq!(resolved.dir, partial);
    for file in ["1_Pooling/config.json", "sentence_bert_config.json"] {
        assert!(resolved.dir.join(file).is_file(), "{file} fetched");
    }
    assert_eq!(locator.locate().unwrap().source, ModelSource::HfCache);
}

#[test]
fn a_server_error_is_model_unavailable_and_leaves_nothing_usable() {
    let server = HubServer::start();
    server.fail("model.safetensors", Fault::Status(500));
    let cache = tempfile::tempdir().unwrap();
    let locator = locator(&server, cache.path());
    let err = locator.resolve(None).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::ModelUnavailable,
        "{}",
        err.full_message()
    );
    assert!(
        err.message().contains("model.safetensors") && err.message().contains(&server.endpoint)
    );
    assert!(
        err.message().contains("CODEOID_MODEL_DIR"),
        "a hint: {}",
        err.message()
    );
    assert!(
        !locator.is_available(),
        "the other files alone are not a model"
    );
}

#[test]
fn an_interrupted_download_is_not_accepted_and_a_retry_recovers() {
    let server = HubServer::start();
    server.fail("model.safetensors", Fault::CutBody);
    let cache = tempfile::tempdir().unwrap();
    let locator = locator(&server, cache.path());
    let err = locator.resolve(None).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::ModelUnavailable,
        "{}",
        err.full_message()
    );
    assert!(
        err.message().contains("model.safetensors"),
        "{}",
        err.message()
    );
    assert!(locator.locate().is_err(), "half a model is never accepted");

    server.heal();
    let resolved = locator.resolve(None).unwrap();
    assert_eq!(resolved.source, ModelSource::Downloaded);
    let bytes = std::fs::read(resolved.dir.join("model.safetensors")).unwrap();
    assert_eq!(bytes, served_files()["model.safetensors"].bytes);
    resolved.load().unwrap();
}

#[test]
fn an_error_page_in_place_of_the_weights_is_caught_and_deleted() {
    let server = HubServer::start();
    server.fail("model.safetensors", Fault::ErrorPageOnGet);
    let cache = tempfile::tempdir().unwrap();
    let locator = locator(&server, cache.path());
    let err = locator.resolve(None).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::ModelUnavailable,
        "{}",
        err.full_message()
    );
    assert!(err.message().contains("corrupt"), "{}", err.message());
    assert!(locator.locate().is_err());
    let blobs = cache.path().join("models--BAAI--bge-small-en-v1.5/blobs");
    let etag = &served_files()["model.safetensors"].etag;
    assert!(!blobs.join(etag).exists(), "the corrupt blob is deleted");
}

#[test]
fn an_unreachable_endpoint_is_model_unavailable() {
    // A port that was just free: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cache = tempfile::tempdir().unwrap();
    let mut locator = ModelLocator::from_vars(|_| None);
    locator.hf_cache = Some(cache.path().to_path_buf());
    locator.download = Some(DownloadSource {
        endpoint: format!("http://127.0.0.1:{port}"),
        max_retries: 0,
    });
    let err = locator.resolve(None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ModelUnavailable);

    locator.download = Some(DownloadSource {
        endpoint: "not a url".to_owned(),
        max_retries: 0,
    });
    let err = locator.resolve(None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ModelUnavailable);
    assert!(err.message().contains("not a url"), "{}", err.message());
}
