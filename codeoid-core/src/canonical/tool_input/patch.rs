//! The files a Codex `apply_patch` call writes: the `*** Add File: p`, `*** Update File: p`,
//! `*** Delete File: p` and `*** Move to: p` lines of its patch.
//!
//! The patch arrives in any of the shapes Codex has used: the whole input as a string (a custom
//! tool call) or an object with `input` or `patch` ([`patch_text`]); through the shell tool, an
//! argument vector `["apply_patch", patch]` or a command line `apply_patch <<'EOF' … EOF`, whose
//! text holds the patch lines as they are (`tool_input` passes it here). Only lines in the patch
//! grammar's header form count; nothing else in the text is read as a path.

use serde_json::Value;

/// The headers that name a file the patch writes.
const FILE_HEADERS: [&str; 4] = [
    "*** Add File: ",
    "*** Update File: ",
    "*** Delete File: ",
    "*** Move to: ",
];

/// The files `patch` names in its headers, in order, without duplicates.
pub(super) fn patch_files(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end_matches('\r');
        let Some(path) = FILE_HEADERS.iter().find_map(|h| line.strip_prefix(h)) else {
            continue;
        };
        let path = path.trim();
        if !path.is_empty() && !out.iter().any(|p| p == path) {
            out.push(path.to_owned());
        }
    }
    out
}

/// The patch text an `apply_patch` tool's input carries: the input itself when it is a string,
/// else its `input` or `patch` string.
pub(super) fn patch_text(input: &Value) -> Option<&str> {
    match input {
        Value::String(s) => Some(s),
        _ => ["input", "patch"]
            .iter()
            .find_map(|k| input.get(k).and_then(Value::as_str)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PATCH: &str = "*** Begin Patch\n*** Update File: src/app.py\n@@ def main():\n-    pass\n+    run()\n*** Add File: src/new.py\n+x = 1\n*** Delete File: old.py\n*** Update File: src/app.py\n*** Move to: src/main.py\n*** End Patch\n";

    #[test]
    fn every_file_header_names_a_file_once() {
        assert_eq!(
            patch_files(PATCH),
            ["src/app.py", "src/new.py", "old.py", "src/main.py"]
        );
        assert!(patch_files("+*** Add File: not/a/header.py\n").is_empty());
        assert!(patch_files("*** Add File:   \n").is_empty());
    }

    #[test]
    fn the_patch_is_found_in_every_shape_codex_sends() {
        assert_eq!(patch_text(&json!(PATCH)), Some(PATCH));
        assert_eq!(patch_text(&json!({ "input": PATCH })), Some(PATCH));
        assert_eq!(patch_text(&json!({ "patch": PATCH })), Some(PATCH));
        assert_eq!(patch_text(&json!({ "other": 1 })), None);
    }
}
