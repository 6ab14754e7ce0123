//! Reading `CODEOID_*` settings: the one spelling of an on/off switch every configuration
//! accepts, and (for tests) a lookup over fixed pairs instead of the process environment.

use crate::error::{Error, Result};

/// `value` of variable `name` as a switch: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`, any
/// case, surrounding blanks ignored.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] naming the variable and its value for anything else.
pub(crate) fn switch(name: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(Error::invalid_input(format!(
            "{name}={value:?} is not a switch; use 1 or 0"
        ))),
    }
}

/// A lookup answering from `pairs` only, for configuration tests.
#[cfg(test)]
pub(crate) fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: std::collections::HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_accept_the_usual_spellings_and_name_a_bad_value() {
        for on in ["1", "true", "YES", " on "] {
            assert!(switch("X", on).unwrap(), "{on}");
        }
        for off in ["0", "False", "no", "OFF"] {
            assert!(!switch("X", off).unwrap(), "{off}");
        }
        let err = switch("CODEOID_X", "maybe").unwrap_err();
        assert!(err.message().contains("CODEOID_X=\"maybe\""), "{err}");
    }
}
