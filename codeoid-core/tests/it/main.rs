//! The one integration-test binary of codeoid-core: a module per concept.

#![allow(clippy::unwrap_used)]

mod compress;
mod embed;
mod fork;
mod import;
mod import_into;
mod index;
mod memory;
mod retrieve;
mod rotate;
mod store;
mod store_rows;
mod support;
mod tools;
mod translate;
