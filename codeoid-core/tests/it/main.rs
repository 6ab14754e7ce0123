//! The one integration-test binary of codeoid-core: a module per concept.

#![allow(clippy::unwrap_used)]

mod compress;
mod embed;
mod import;
mod index;
mod memory;
mod retrieve;
mod rotate;
mod store;
mod tools;
mod translate;
