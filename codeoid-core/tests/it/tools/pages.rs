//! `get_episode` pages: long content comes in pages of at most `EPISODE_PAGE_CHARS` characters,
//! each ending with the exact arguments of the next, and walking them rebuilds the whole content
//! byte for byte, a capped episode's middle (which its stored excerpt leaves out) included.

use codeoid_core::store::StoreOptions;
use codeoid_core::tools::EPISODE_PAGE_CHARS;
use codeoid_core::{Memory, MemoryConfig};
use serde_json::{Value, json};

use super::lexical_config;
use crate::retrieve::{exchange, open_in, session};

/// What one `get_episode` page showed.
pub(super) struct Shown {
    /// The header lines.
    pub(super) header: String,
    /// The content part of the page.
    pub(super) body: String,
    /// The arguments the page gave for the next one.
    pub(super) next: Option<Value>,
}

const NEXT_MARKER: &str = "not shown; next page: get_episode ";

/// A page's parts. Only a page with a `- page:` header line has a next-page marker: content
/// shown without one is whole, even when it ends with a marker-like line (a recorded
/// `get_episode` result does).
fn shown(text: &str) -> Shown {
    let (header, rest) = text.split_once("\n\n").expect("a header, then the content");
    let paged = header.contains("\n- page: characters ");
    let (body, next) = match rest.rsplit_once("\n[codeoid: characters ") {
        Some((body, marker)) if paged && marker.contains(NEXT_MARKER) => {
            let args = marker
                .split_once(NEXT_MARKER)
                .and_then(|(_, args)| args.strip_suffix(']'))
                .expect("the marker ends with the next page's arguments");
            (
                body,
                Some(serde_json::from_str(args).expect("JSON arguments")),
            )
        }
        _ => (rest, None),
    };
    Shown {
        header: header.to_owned(),
        body: body.to_owned(),
        next,
    }
}

/// Follows the pages of episode `id` from the first, as `session` sees them; returns every page.
pub(super) fn walk_in(memory: &Memory, session: Option<&str>, id: &str) -> Vec<Shown> {
    let mut pages = Vec::new();
    let mut args = json!({ "episode_id": id });
    loop {
        let out = memory.call_tool(session, "get_episode", &args.to_string());
        assert!(!out.is_error, "{}", out.text);
        let page = shown(&out.text);
        let next = page.next.clone();
        if let Some(next) = &next {
            assert_eq!(
                next["episode_id"], id,
                "the next page is of the same episode"
            );
        }
        pages.push(page);
        match next {
            Some(next) => args = next,
            None => return pages,
        }
        assert!(pages.len() < 1_000, "the walk ends");
    }
}

fn walk(memory: &Memory, id: &str) -> Vec<Shown> {
    walk_in(memory, None, id)
}

/// A memory (lexical; episodes capped at `max_episode_bytes` when given) holding one exchange:
/// `tool` called with `input` and answered with `output`. Returns the tool call's episode id.
fn one_episode(
    max_episode_bytes: Option<usize>,
    tool: &str,
    input: Value,
    output: &str,
) -> (tempfile::TempDir, Memory, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StoreOptions::default();
    if let Some(max) = max_episode_bytes {
        store.max_episode_bytes = max;
    }
    let memory = open_in(
        dir.path(),
        MemoryConfig {
            store,
            ..lexical_config()
        },
    );
    let s = session(&memory, "work");
    let id = exchange(&memory, &s, "k", 0, "look", tool, input, output);
    (dir, memory, id)
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

#[test]
fn long_content_comes_in_pages_that_rebuild_it_exactly() {
    // Multi-byte characters on every line, lines of varying length.
    let output: String = (0..3_000)
        .map(|i| format!("ligne {i} — état {} ✓\n", "é".repeat(i % 17)))
        .collect();
    let (_dir, memory, id) = one_episode(None, "Bash", json!({"command": "cat big.log"}), &output);
    let content = memory.episode(&id).unwrap().content;
    let total = chars(&content);
    assert!(total > 3 * EPISODE_PAGE_CHARS, "{total} characters");

    let pages = walk(&memory, &id);
    let rebuilt: String = pages.iter().map(|p| p.body.as_str()).collect();
    assert_eq!(rebuilt, content, "the pages are the content, byte for byte");
    // Every page but the last is over half full.
    assert!(pages.len() >= total.div_ceil(EPISODE_PAGE_CHARS));
    assert!(pages.len() <= total.div_ceil(EPISODE_PAGE_CHARS / 2));
    let mut start = 0;
    for (i, page) in pages.iter().enumerate() {
        let n = chars(&page.body);
        assert!(n <= EPISODE_PAGE_CHARS, "page {i}: {n} characters");
        assert!(
            page.header.ends_with(&format!(
                "\n- page: characters {start}–{} of {total}",
                start + n
            )),
            "{}",
            page.header
        );
        assert!(page.header.contains(&format!("\n- episode_id: {id}\n")));
        if i + 1 < pages.len() {
            // Cut at a line break in the page's second half, not mid-line.
            assert!(page.body.ends_with('\n'), "page {i}");
            assert!(n > EPISODE_PAGE_CHARS / 2, "page {i}: {n} characters");
            assert_eq!(
                page.next,
                Some(json!({ "episode_id": id, "offset": start + n }))
            );
        }
        start += n;
    }
}

#[test]
fn a_line_longer_than_a_page_is_cut_at_the_page_size() {
    let minified = format!("{{\"data\":\"{}\"}}", "日本".repeat(EPISODE_PAGE_CHARS));
    let (_dir, memory, id) = one_episode(
        None,
        "Bash",
        json!({"command": "curl -s api/data"}),
        &minified,
    );
    let pages = walk(&memory, &id);
    assert_eq!(chars(&pages[0].body), EPISODE_PAGE_CHARS);
    let rebuilt: String = pages.iter().map(|p| p.body.as_str()).collect();
    assert_eq!(rebuilt, memory.episode(&id).unwrap().content);
}

#[test]
fn a_capped_episode_is_paged_whole_from_its_blob() {
    let output: String = (0..8_000).map(|i| format!("log line {i}\n")).collect();
    let (_dir, memory, id) = one_episode(
        Some(16 * 1024),
        "Bash",
        json!({"command": "make -j2"}),
        &output,
    );
    let stored = memory.episode(&id).unwrap();
    assert!(!stored.content.contains("log line 4000\n"), "an excerpt");
    let blob = stored.blobs.iter().find(|b| b.role == "content").unwrap();
    let whole = String::from_utf8(memory.blob(&blob.blob_id).unwrap()).unwrap();

    let pages = walk(&memory, &id);
    let rebuilt: String = pages.iter().map(|p| p.body.as_str()).collect();
    assert_eq!(rebuilt, whole, "the whole content, its middle included");
    assert!(rebuilt.contains("log line 4000\n"));
    assert!(
        pages[0]
            .header
            .contains(&format!("\n- raw content: {}", blob.blob_id))
    );
}

#[test]
fn recall_points_a_capped_episodes_marker_at_get_episode() {
    // Stored, a capped episode's excerpt names the raw blob holding the rest; no memory tool
    // reads blobs, so the model is told to page it with get_episode.
    let output: String = (0..600).map(|i| format!("line {i} zebrafish\n")).collect();
    let (_dir, memory, id) =
        one_episode(Some(4 * 1024), "Bash", json!({"command": "make"}), &output);
    let stored = memory.episode(&id).unwrap();
    assert!(
        stored.content.contains("; raw blob blob_"),
        "the store's marker"
    );
    let pointer = format!("bytes omitted here; get_episode(\"{id}\") pages the whole episode]");
    let recall = memory.call_tool(None, "recall", r#"{"query": "zebrafish", "limit": 1}"#);
    assert!(recall.text.contains(&pointer), "{}", recall.text);
    assert!(!recall.text.contains("raw blob"), "{}", recall.text);
}

#[test]
fn a_capped_episode_that_fits_one_page_is_shown_whole() {
    let output: String = (0..600).map(|i| format!("line {i}\n")).collect();
    let (_dir, memory, id) =
        one_episode(Some(4 * 1024), "Bash", json!({"command": "make"}), &output);
    let stored = memory.episode(&id).unwrap();
    let blob = stored.blobs.iter().find(|b| b.role == "content").unwrap();
    let whole = String::from_utf8(memory.blob(&blob.blob_id).unwrap()).unwrap();
    assert!(stored.content.len() < whole.len(), "capped");
    let out = memory.call_tool(None, "get_episode", &json!({"episode_id": id}).to_string());
    let page = shown(&out.text);
    assert_eq!(page.body, whole, "the whole content, not the excerpt");
    assert!(!page.header.contains("- page:"));
    assert!(page.next.is_none());
}

#[test]
fn a_recorded_get_episode_result_is_content_not_a_next_page() {
    let inner = "x\n[codeoid: characters 10–99 not shown; next page: get_episode \
                 {\"episode_id\":\"ep_other\",\"offset\":10}]";
    let (_dir, memory, id) = one_episode(
        None,
        "get_episode",
        json!({"episode_id": "ep_other"}),
        inner,
    );
    let pages = walk(&memory, &id);
    assert_eq!(pages.len(), 1);
    assert!(pages[0].body.ends_with(inner));
}

#[test]
fn short_content_is_one_page_without_a_page_line() {
    let (_dir, memory, id) = one_episode(None, "Bash", json!({"command": "ls"}), "a\nb\n");
    let out = memory.call_tool(None, "get_episode", &json!({"episode_id": id}).to_string());
    assert_eq!(out.text, memory.episode_text(None, &id).unwrap());
    assert!(!out.text.contains("- page:"));
    // A later offset shows the rest, and says where it starts.
    let rest = memory.call_tool(
        None,
        "get_episode",
        &json!({"episode_id": id, "offset": 3}).to_string(),
    );
    let content = memory.episode(&id).unwrap().content;
    let total = chars(&content);
    let page = shown(&rest.text);
    assert!(
        page.header
            .ends_with(&format!("- page: characters 3–{total} of {total}"))
    );
    assert_eq!(page.body, content.chars().skip(3).collect::<String>());
    assert!(page.next.is_none());
}

#[test]
fn an_offset_past_the_end_is_an_error_naming_the_length() {
    let (_dir, memory, id) = one_episode(None, "Bash", json!({"command": "ls"}), "a\nb\n");
    let total = chars(&memory.episode(&id).unwrap().content);
    for offset in [total, total + 1, 1 << 40] {
        let out = memory.call_tool(
            None,
            "get_episode",
            &json!({"episode_id": id, "offset": offset}).to_string(),
        );
        assert!(out.is_error);
        assert_eq!(
            out.text,
            format!(
                "get_episode failed: offset {offset} is past the end of episode {id}, whose \
                 content has {total} characters; pages start at offset 0"
            )
        );
    }
    for bad in [json!(-1), json!("10"), json!(1.5)] {
        let out = memory.call_tool(
            None,
            "get_episode",
            &json!({"episode_id": id, "offset": bad}).to_string(),
        );
        assert!(out.is_error);
        assert!(
            out.text
                .starts_with("invalid arguments for get_episode: \"offset\"")
                && out.text.ends_with(
                    "Expected: {\"episode_id\": string (required), \"offset\": integer >= 0 \
                     (default 0)}"
                ),
            "{}",
            out.text
        );
    }
}
