//! Local sentence embeddings: a sentence-transformers BERT checkpoint (bge-small-en-v1.5,
//! all-MiniLM-L6-v2, …) run on the CPU with candle.
//!
//! - `checkpoint` ([`Checkpoint`]): which files a checkpoint has and what its configuration says
//!   (pooling, maximum length, query instruction).
//! - `resolve` ([`ModelLocator`]) and `download`: where the model comes from (an explicit
//!   directory, `CODEOID_MODEL_DIR`, the Hugging Face cache, a download), and a cheap "is a model
//!   available" check.
//! - `tokenize`, `bert`, `kernels`, `pool`: text to ids, the encoder forward pass and its dense
//!   math, pooling and normalization.
//! - [`Embedder`]: the public entry point; `windows` ([`WindowPolicy`]) cuts long episodes into
//!   windows; `identity` makes [`Embedder::model_id`].
//!
//! Invariants across the module: vectors are L2-normalized and [`Embedder::dim`] wide; queries
//! get the model's query instruction, documents do not (unless the checkpoint declares a
//! document prompt). Not here: storing vectors, the background worker, the vector index.
//! See `docs/embeddings.md`.

mod bert;
mod checkpoint;
mod download;
mod embedder;
mod identity;
mod kernels;
mod pool;
mod resolve;
mod tokenize;
mod windows;

pub use checkpoint::{Checkpoint, MIN_SEQ_LEN, Pooling};
pub use download::{DownloadProgress, DownloadSource, ProgressFn};
pub use embedder::{Embedder, EmbedderOptions, EpisodeText};
pub use resolve::{
    DEFAULT_ENDPOINT, DEFAULT_MODEL_REPO, MODEL_DIR_ENV, ModelLocator, ModelSource, ResolvedModel,
};
pub use windows::WindowPolicy;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedder_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Embedder>();
    }
}
