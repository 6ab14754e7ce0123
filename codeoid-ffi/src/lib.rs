//! The C ABI of codeoid: `libcodeoid.so` / `libcodeoid.a` and `include/codeoid.h`.
//!
//! A thin layer over [`codeoid_core::Memory`] and the store-free leaves (`translate`), so a
//! harness written in C, Go or anything else that can call C links codeoid directly instead of
//! talking to a daemon. The contract, stated once here and in full in `docs/ffi.md`:
//!
//! - Every symbol starts with `codeoid_`. Handles are opaque (`codeoid_memory`); `_open`
//!   creates one, `_free` destroys it, and `_free(NULL)` does nothing.
//! - A fallible function returns `codeoid_error *`: `NULL` on success, otherwise an owned error
//!   with a stable numeric code ([`error`]) and the full message, freed with
//!   `codeoid_error_free`. Errors are returned objects, never thread-local state, so a caller
//!   whose calls move between OS threads (Go) reads the right error.
//! - Out-parameters come last and are written only on success.
//! - Text goes in as `(const char *ptr, size_t len)` and is validated as UTF-8; `NULL` is
//!   accepted only where an argument is documented as optional. Variable-size results come out
//!   as an owned [`strings::codeoid_string`] freed by `codeoid_string_free`, which may be called
//!   twice. Nested data (turns, sessions, episodes, decisions, provider messages) crosses as JSON.
//! - Every body runs inside a panic boundary (module `panic`): a bug in codeoid comes back as an error
//!   with code `CODEOID_ERROR_PANIC`, never as an abort or unwinding into C.
//! - Enum values from C are plain integers, checked before use.
//!
//! Layout, one concept per file: [`version`], [`error`], `panic`, [`strings`] (owned output and
//! validated input), `args` (pointer checks), `json` (the JSON shapes), [`cancel`] (the flag that
//! stops a long call from another thread), and one file per API area
//! ([`memory`], [`sessions`], [`messages`] for provider messages and turns read back, [`reads`], [`recall`] for retrieval and the embedding worker,
//! [`tools`] for the memory tools, [`rotation`], [`index`], [`compress`], [`translate`],
//! [`lineage`] for fork and import).
//!
//! The Rust functions here are `unsafe extern "C"` because they take raw pointers; Rust code
//! should use `codeoid-core` directly. The rlib exists for this crate's tests and benches.

#![allow(non_camel_case_types)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod args;
pub mod cancel;
pub mod compress;
pub mod error;
pub mod index;
mod json;
pub mod lineage;
pub mod memory;
pub mod messages;
mod panic;
pub mod reads;
pub mod recall;
pub mod rotation;
pub mod sessions;
pub mod strings;
pub mod tools;
pub mod translate;
pub mod version;

#[cfg(test)]
mod tests;

pub use cancel::*;
pub use compress::*;
pub use error::*;
pub use index::*;
pub use lineage::*;
pub use memory::*;
pub use messages::*;
pub use reads::*;
pub use recall::*;
pub use rotation::*;
pub use sessions::*;
pub use strings::*;
pub use tools::*;
pub use translate::*;
pub use version::*;
