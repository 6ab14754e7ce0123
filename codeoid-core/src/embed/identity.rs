//! The model identifier recorded beside every stored vector, so that a change of model (or of
//! how codeoid turns text into vectors) is noticed and triggers re-embedding.
//!
//! The identifier is `{short name}@{16 hex digits}`: the digits are the start of a SHA-256 over
//! the bytes of every file that affects document vectors (config, tokenizer, the
//! sentence-transformers files, the weights) and codeoid's own recipe (its version and the
//! window policy). Copying or re-downloading the same checkpoint keeps the identifier; any
//! change to its content changes it. Hashing the weights costs a few tens of milliseconds with
//! the CPU's SHA extensions, once per load, while the file is in memory anyway.
//!
//! Deliberately not here: deciding what to re-embed (the store and the embedding worker compare
//! identifiers).

use sha2::{Digest, Sha256};

use super::windows::WindowPolicy;

/// Bumped whenever codeoid changes how it computes document vectors from the same checkpoint
/// (pooling, truncation, window text layout), so stored vectors are recomputed.
const RECIPE_VERSION: u32 = 1;

/// Builds identifiers from the checkpoint's files, fed in a fixed order.
pub(crate) struct ModelIdBuilder {
    hasher: Sha256,
}

impl ModelIdBuilder {
    pub(crate) fn new(policy: WindowPolicy) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"codeoid-embed-recipe\0");
        hasher.update(RECIPE_VERSION.to_le_bytes());
        hasher.update((policy.max_windows as u64).to_le_bytes());
        hasher.update((policy.overlap_tokens as u64).to_le_bytes());
        ModelIdBuilder { hasher }
    }

    /// Adds one file: its name, whether it exists, its length and its bytes, so that moving
    /// bytes between files or deleting an optional one changes the digest.
    pub(crate) fn file(&mut self, name: &str, bytes: Option<&[u8]>) {
        self.hasher.update((name.len() as u64).to_le_bytes());
        self.hasher.update(name.as_bytes());
        match bytes {
            Some(bytes) => {
                self.hasher.update([1u8]);
                self.hasher.update((bytes.len() as u64).to_le_bytes());
                self.hasher.update(bytes);
            }
            None => self.hasher.update([0u8]),
        }
    }

    /// The identifier: the last segment of `name` (`bge-small-en-v1.5`), `@`, 16 hex digits.
    pub(crate) fn finish(self, name: &str) -> String {
        let digest = self.hasher.finalize();
        let short = name
            .rsplit('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("model");
        let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!("{short}@{hex}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(files: &[(&str, Option<&[u8]>)], policy: WindowPolicy) -> String {
        let mut builder = ModelIdBuilder::new(policy);
        for (name, bytes) in files {
            builder.file(name, *bytes);
        }
        builder.finish("org/model")
    }

    #[test]
    fn identifiers_change_with_content_policy_and_presence() {
        let policy = WindowPolicy::default();
        let base = id(&[("a", Some(b"xy")), ("b", None)], policy);
        assert!(base.starts_with("model@") && base.len() == "model@".len() + 16);
        assert_eq!(base, id(&[("a", Some(b"xy")), ("b", None)], policy));
        assert_ne!(base, id(&[("a", Some(b"xz")), ("b", None)], policy));
        assert_ne!(base, id(&[("a", Some(b"xy")), ("b", Some(b""))], policy));
        assert_ne!(base, id(&[("a", Some(b"x")), ("b", Some(b"y"))], policy));
        let other = WindowPolicy {
            max_windows: 4,
            ..policy
        };
        assert_ne!(base, id(&[("a", Some(b"xy")), ("b", None)], other));
    }
}
