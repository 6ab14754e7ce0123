//! Versions: the header macros (`CODEOID_VERSION_*`, `CODEOID_ABI_VERSION`) and the functions
//! that report the library's own, so a program can check at startup that the header it was
//! compiled against matches the library it runs with.
//!
//! The numbers are literals (cbindgen copies literals into `#define`s); a test proves they equal
//! the crate version in `Cargo.toml`, so a version bump that forgets them fails the build.

use std::ffi::c_char;

/// Major version of the header (`MAJOR.minor.patch` of the crate).
pub const CODEOID_VERSION_MAJOR: u32 = 0;
/// Minor version of the header.
pub const CODEOID_VERSION_MINOR: u32 = 1;
/// Patch version of the header.
pub const CODEOID_VERSION_PATCH: u32 = 0;
/// The header's version as one number: `(MAJOR << 16) | (MINOR << 8) | PATCH`. Compare it with
/// `codeoid_abi_version()` at startup: while the major version is 0, any other minor version is
/// incompatible; from 1.0 on, a library with the same major version and a minor version at least
/// the header's is compatible.
pub const CODEOID_ABI_VERSION: u32 =
    (CODEOID_VERSION_MAJOR << 16) | (CODEOID_VERSION_MINOR << 8) | CODEOID_VERSION_PATCH;

/// The version string, NUL-terminated.
const VERSION_CSTR: &std::ffi::CStr = c"0.1.0";

/// The version of the library actually linked, encoded like `CODEOID_ABI_VERSION`.
///
/// Thread-safe; cannot fail.
#[unsafe(no_mangle)]
pub extern "C" fn codeoid_abi_version() -> u32 {
    CODEOID_ABI_VERSION
}

/// The version of the library actually linked as a NUL-terminated string (`"0.1.0"`). The string
/// is static: do not free it.
///
/// Thread-safe; cannot fail.
#[unsafe(no_mangle)]
pub extern "C" fn codeoid_version() -> *const c_char {
    VERSION_CSTR.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cargo(part: &str) -> u32 {
        part.parse().expect("Cargo.toml version parts are numbers")
    }

    #[test]
    fn header_macros_match_cargo_toml() {
        assert_eq!(
            CODEOID_VERSION_MAJOR,
            cargo(env!("CARGO_PKG_VERSION_MAJOR"))
        );
        assert_eq!(
            CODEOID_VERSION_MINOR,
            cargo(env!("CARGO_PKG_VERSION_MINOR"))
        );
        assert_eq!(
            CODEOID_VERSION_PATCH,
            cargo(env!("CARGO_PKG_VERSION_PATCH"))
        );
        assert_eq!(VERSION_CSTR.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn abi_version_encodes_the_three_parts() {
        let v = codeoid_abi_version();
        assert_eq!(v, CODEOID_ABI_VERSION);
        assert_eq!(v >> 16, CODEOID_VERSION_MAJOR);
        assert_eq!((v >> 8) & 0xff, CODEOID_VERSION_MINOR);
        assert_eq!(v & 0xff, CODEOID_VERSION_PATCH);
        // SAFETY: codeoid_version returns a static NUL-terminated string.
        let s = unsafe { std::ffi::CStr::from_ptr(codeoid_version()) };
        assert_eq!(s.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
