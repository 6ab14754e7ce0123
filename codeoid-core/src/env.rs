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

/// `err`, from checking a configuration read through `lookup`, restated with the variables of
/// `names` that are set there: a value can be valid alone and wrong beside another (a soft
/// threshold above the hard one), so every one that took part is named.
pub(crate) fn from_variables(
    err: Error,
    lookup: impl Fn(&str) -> Option<String>,
    names: &[&str],
) -> Error {
    let set: Vec<String> = names
        .iter()
        .filter_map(|name| {
            let value = lookup(name).filter(|v| !v.trim().is_empty())?;
            Some(format!("{name}={value:?}"))
        })
        .collect();
    if set.is_empty() {
        return err;
    }
    Error::invalid_input(format!(
        "{} (from the environment: {})",
        err.message(),
        set.join(", ")
    ))
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

    #[test]
    fn a_check_that_fails_names_the_variables_that_are_set() {
        let err = from_variables(
            Error::invalid_input("hard threshold 1.5 is outside (0, 1]"),
            lookup(&[("CODEOID_A", "1.5"), ("CODEOID_C", " ")]),
            &["CODEOID_A", "CODEOID_B", "CODEOID_C"],
        );
        assert_eq!(
            err.message(),
            "hard threshold 1.5 is outside (0, 1] (from the environment: CODEOID_A=\"1.5\")"
        );
        let untouched = from_variables(Error::invalid_input("x"), lookup(&[]), &["CODEOID_A"]);
        assert_eq!(untouched.message(), "x");
    }
}
