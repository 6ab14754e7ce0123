//! The one integration-test binary of codeoid-core: a module per concept.

#![allow(clippy::unwrap_used)]

mod embed;
