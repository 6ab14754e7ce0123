//! What a terminal would show: captured bytes turned into the text lines the rules read.
//!
//! Commands write for terminals: colour codes (`ESC [ … m`), cursor and title sequences,
//! carriage returns that redraw a progress line in place, Windows line endings, and now and then
//! bytes that are not UTF-8. [`normalize`] turns all of that into plain text lines: escape
//! sequences are removed, a line rewritten with `\r` keeps what the terminal would finally show,
//! a Windows line ending is dropped when every line has one and shown as `^M` when only some do,
//! invalid UTF-8 becomes U+FFFD, and NUL bytes, which a terminal does not show, are dropped.
//! Rules, fact patterns and the compressed output all work on this text, which is why compressed
//! output never carries colour codes (the raw bytes, colours included, are in the store).
//!
//! [`classify`] decides when output is not text lines at all (binary data, or NUL-delimited
//! records), so no rule tries to read it.
//!
//! This module does not interpret cursor movement beyond `\r` (no full terminal emulation) and
//! never changes text that has no escapes and no carriage returns: then [`normalize`] borrows.

use std::borrow::Cow;

const ESC: u8 = 0x1b;

/// How many leading bytes [`classify`] inspects.
const SNIFF_BYTES: usize = 8 * 1024;

/// What captured output is, as far as the rules are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Content {
    /// Text lines: what the rules read.
    Text,
    /// Records of text ended by NUL bytes (`find -print0`, `git status -z`, `grep -Z`,
    /// `rg --null`): text, but not in lines the rules could read, so it is shown as it is.
    NulDelimited,
    /// Binary data.
    Binary,
}

/// Classifies `bytes`. Binary: more than one in ten characters of the first 8 KiB not
/// decodable as UTF-8 (executables, images, archives), or more than one in ten bytes of both the
/// first 8 KiB and the whole output NUL or another control byte no text is laid out with
/// (database files, raw frames). NUL bytes alone between printable records in the first 8 KiB (no runs, none first)
/// make NUL-delimited text. Anything else is text, a few NUL bytes included: a test that prints
/// a binary frame, or a log that starts with the zeros `copytruncate` leaves, must not hide the
/// lines around them ([`normalize`] drops NUL bytes, as a terminal does).
pub(crate) fn classify(bytes: &[u8]) -> Content {
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if head.contains(&0) {
        let other_control = head.iter().any(|&b| b != 0 && is_binary_byte(b));
        let runs = head.first() == Some(&0) || head.windows(2).any(|w| w == [0, 0]);
        if !other_control && !runs {
            return if mostly_undecodable(head) {
                Content::Binary
            } else {
                Content::NulDelimited
            };
        }
    }
    // Such bytes must be more than one in ten of the head and of the whole output (the whole is
    // only counted when the head looks binary, so text costs one pass over 8 KiB).
    let mostly_binary =
        |bytes: &[u8]| bytes.iter().filter(|&&b| is_binary_byte(b)).count() * 10 > bytes.len();
    if (mostly_binary(head) && mostly_binary(bytes)) || mostly_undecodable(head) {
        Content::Binary
    } else {
        Content::Text
    }
}

/// NUL, or a control byte text is not laid out with (tab, line feed, carriage return, form
/// feed, backspace and escape are).
fn is_binary_byte(b: u8) -> bool {
    (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x08 | ESC)) || b == 0x7f
}

/// More than one in ten characters of `head` are not UTF-8.
fn mostly_undecodable(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let Cow::Owned(text) = text else {
        return false;
    };
    // A multi-byte character cut at the sniff boundary is not evidence of binary data.
    let bad = text
        .chars()
        .filter(|&c| c == char::REPLACEMENT_CHARACTER)
        .count();
    bad * 10 > text.chars().count().max(1)
}

/// Decodes `bytes` as UTF-8 (lossily), drops NUL bytes, strips terminal escape sequences and
/// applies carriage returns the way a terminal shows them. Borrows when there is nothing to
/// change.
pub(crate) fn normalize(bytes: &[u8]) -> Cow<'_, str> {
    let mut text = String::from_utf8_lossy(bytes);
    if text.contains('\0') {
        // A terminal shows nothing for NUL; a model reading it gains nothing either.
        text = Cow::Owned(text.replace('\0', ""));
    }
    let needs_work = text.as_bytes().iter().any(|&b| b == ESC || b == b'\r');
    if !needs_work {
        return text;
    }
    let stripped = strip_escapes(&text);
    Cow::Owned(apply_carriage_returns(&stripped))
}

/// Removes CSI (`ESC [ … final`), OSC (`ESC ] … BEL` or `ESC ] … ESC \`) and two-byte escape
/// sequences. A lone or truncated escape at the end of the text is dropped.
fn strip_escapes(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied_from = 0;
    while i < bytes.len() {
        if bytes[i] != ESC {
            i += 1;
            continue;
        }
        out.push_str(&text[copied_from..i]);
        i = skip_escape(bytes, i);
        copied_from = i;
    }
    out.push_str(&text[copied_from..]);
    out
}

/// Returns the index just past the escape sequence starting at `start` (which holds `ESC`).
/// Every index returned is at an ASCII byte or the end, so slicing the text there is valid.
fn skip_escape(bytes: &[u8], start: usize) -> usize {
    let Some(&kind) = bytes.get(start + 1) else {
        return bytes.len();
    };
    match kind {
        b'[' => {
            // Parameters and intermediates are 0x20..=0x3f; the final byte is 0x40..=0x7e.
            let mut i = start + 2;
            while i < bytes.len() && (0x20..=0x3f).contains(&bytes[i]) {
                i += 1;
            }
            if i < bytes.len() && (0x40..=0x7e).contains(&bytes[i]) {
                i + 1
            } else {
                i
            }
        }
        b']' => {
            let mut i = start + 2;
            while i < bytes.len() {
                match bytes[i] {
                    0x07 => return i + 1,
                    ESC if bytes.get(i + 1) == Some(&b'\\') => return i + 2,
                    _ => i += 1,
                }
            }
            i
        }
        // Character set designations (`ESC ( B`) take one more byte.
        b'(' | b')' | b'*' | b'+' | b'-' | b'.' | b'/' | b'#' | b'%' => {
            match bytes.get(start + 2) {
                Some(b) if b.is_ascii() => start + 3,
                _ => start + 2,
            }
        }
        // A non-ASCII byte after ESC is the start of a character, not part of the escape.
        k if k.is_ascii() => start + 2,
        _ => start + 1,
    }
}

/// Keeps, for each line, what a terminal shows after every `\r` has moved the cursor back to the
/// start of the line: later text overwrites earlier text character by character. A `\r` just
/// before the newline (Windows line endings) changes nothing.
fn apply_carriage_returns(text: &str) -> String {
    // Windows line endings on every line are line endings; on some lines only (a diff of a file
    // converted to CRLF) they are content, shown as `^M` the way `cat -A` and git show them.
    // Some line ends in `\r` and some other non-empty line does not; both scans stop at their
    // first find, and colour-only output without any `\r` skips the second.
    let mixed = (text.contains("\r\n") || text.ends_with('\r'))
        && text
            .split('\n')
            .any(|l| !l.is_empty() && !l.ends_with('\r'));
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let (line, ending) = match line.strip_suffix('\r') {
            Some(line) => (line, mixed),
            None => (line, false),
        };
        if !line.contains('\r') {
            out.push_str(line);
            if ending {
                out.push_str("^M");
            }
            continue;
        }
        let mut screen: Vec<char> = Vec::new();
        for piece in line.split('\r') {
            for (col, c) in piece.chars().enumerate() {
                if col < screen.len() {
                    screen[col] = c;
                } else {
                    screen.push(c);
                }
            }
        }
        out.extend(screen);
        if ending {
            out.push_str("^M");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = b"hello\nworld\n";
        assert!(matches!(normalize(text), Cow::Borrowed("hello\nworld\n")));
    }

    #[test]
    fn line_endings_on_some_lines_only_are_shown() {
        assert_eq!(normalize(b"a\r\nb\r\n"), "a\nb\n");
        assert_eq!(
            normalize(b"-line 1\n+line 1\r\n same\n"),
            "-line 1\n+line 1^M\n same\n"
        );
    }

    #[test]
    fn colour_codes_are_removed_and_text_kept() {
        let raw = b"\x1b[1m\x1b[32mtest result: \x1b[0m\x1b[31mFAILED\x1b[0m. 1 passed\n";
        assert_eq!(normalize(raw), "test result: FAILED. 1 passed\n");
    }

    #[test]
    fn osc_title_and_two_byte_escapes_are_removed() {
        let raw = b"\x1b]0;title\x07a\x1b(Bb\x1b]8;;http://x\x1b\\c";
        assert_eq!(normalize(raw), "abc");
    }

    #[test]
    fn truncated_escape_at_end_is_dropped() {
        assert_eq!(normalize(b"ok\x1b["), "ok");
        assert_eq!(normalize(b"ok\x1b"), "ok");
    }

    #[test]
    fn escape_before_multibyte_character_keeps_the_character() {
        assert_eq!(normalize("a\x1bé".as_bytes()), "aé");
    }

    #[test]
    fn carriage_returns_overwrite_like_a_terminal() {
        assert_eq!(normalize(b"10%\r55%\r100% done\n"), "100% done\n");
        assert_eq!(normalize(b"abcdef\rxy\n"), "xycdef\n");
        assert_eq!(normalize(b"one\r\ntwo\r\n"), "one\ntwo\n");
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        assert_eq!(normalize(b"caf\xe9 ok\n"), "caf\u{fffd} ok\n");
    }

    #[test]
    fn binary_detection() {
        let binary = |bytes: &[u8]| classify(bytes) == Content::Binary;
        assert!(binary(b"\x7fELF\x02\x01\x01\0\0\0"));
        assert!(binary(&[0xff, 0xfe, 0xfd, 0xfc, 0x80, 0x81, b'a']));
        assert!(binary(b"\0\0\0\0zeros"));
        assert!(binary(b"PNG\x1a\n\0IHDR"));
        assert!(!binary(
            b"plain text with one bad byte \xe9 in a long enough line"
        ));
        assert_eq!(classify("über ünïcödé".as_bytes()), Content::Text);
        assert_eq!(classify(b""), Content::Text);
    }

    #[test]
    fn a_few_nul_bytes_in_text_leave_it_text_and_are_dropped() {
        // A passing test printed a binary frame among a test run's lines.
        let mut run = b"test_b.py::test_frame frame: \0\0\x01\x02hello\nPASSED\n".to_vec();
        run.extend(b"test_b.py::test_decode FAILED\n".repeat(50));
        assert_eq!(classify(&run), Content::Text);
        assert!(normalize(&run).starts_with("test_b.py::test_frame frame: \x01\x02hello\n"));
        // A log whose first kilobytes are the zeros log rotation (`copytruncate`) left.
        let mut log = vec![0u8; 3_000];
        log.extend(b"2026-12-01 12:00:00 INFO request served in 12 ms\n".repeat(1_000));
        assert_eq!(classify(&log), Content::Text);
        assert!(normalize(&log).starts_with("2026-12-01 12:00:00 INFO"));
        // Mostly zeros is still binary (a sparse database file).
        let mut sparse = vec![0u8; 60_000];
        sparse.extend(b"SQLite format 3 with a few readable strings\n".repeat(10));
        assert_eq!(classify(&sparse), Content::Binary);
    }

    #[test]
    fn nul_delimited_records_are_text_of_their_own_kind() {
        for records in [
            &b"./src/main.rs\0./src/lib.rs\0./README.md\0"[..],
            b"UU conflict.rs\0R  new.rs\0old.rs\0 M changed.rs\0",
            b"src/a.rs\x0012:fn main() {}\nsrc/b.rs\x003:use x;\n",
        ] {
            assert_eq!(classify(records), Content::NulDelimited);
        }
    }
}
