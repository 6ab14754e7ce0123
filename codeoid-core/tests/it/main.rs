//! The one integration-test binary of codeoid-core: a module per concept.

#![allow(clippy::unwrap_used)]

mod import;
mod index;
mod rotate;
mod translate;
mod compress;
mod store;
