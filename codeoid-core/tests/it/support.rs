//! What many test modules share: where the real session logs are.

use std::path::{Path, PathBuf};

/// `../shared/evaldata` beside the checkout: real, MIT-licensed agent logs, read in place.
pub fn evaldata() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/evaldata");
    dir.canonicalize().unwrap_or(dir)
}
