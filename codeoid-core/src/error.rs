//! The one error type of codeoid and the flat [`ErrorKind`] that bindings branch on.
//!
//! Every fallible function in the crate returns [`Result`]. An [`Error`] carries a kind, a message
//! written for the person who has to fix the problem (lowercase, naming the offending value, a hint
//! after `;`) and, when a dependency failed, that failure as a boxed [`std::error::Error::source`].
//! Third-party error types never appear in the public API, so upgrading a dependency cannot change it.
//!
//! The numeric codes of [`ErrorKind::code`] are part of the C ABI and the Python exception mapping:
//! they are stable and never reused. A new kind gets a new number.

use std::fmt;

/// What went wrong, coarsely, so callers and bindings can branch without parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The caller passed something malformed: bad JSON, an unknown role, an empty id, an
    /// out-of-range argument, a tool call with wrong arguments.
    InvalidInput,
    /// A session, episode, blob or file that the caller named does not exist (in this workspace).
    NotFound,
    /// The thing the caller wants to create already exists with different contents.
    AlreadyExists,
    /// SQLite reported a failure that is not one of the more specific kinds below.
    Database,
    /// Another process kept the database locked for longer than the busy timeout.
    Busy,
    /// The file is not a codeoid store: corrupt, truncated, or another application's database.
    Corrupt,
    /// The store was written by a newer codeoid whose schema this library does not know.
    SchemaTooNew,
    /// A filesystem operation failed: missing directory, permission denied, read-only volume.
    Io,
    /// No embedding model could be found or downloaded.
    ModelUnavailable,
    /// An embedding model was found but could not be loaded or run.
    Model,
    /// A conversation cannot be expressed in the requested provider format.
    Translation,
    /// A session log could not be imported as a whole (individual malformed lines are skipped and
    /// counted instead).
    Import,
    /// A rotation was requested but the policy refuses it; the message says why.
    RotationRefused,
    /// A bug in codeoid: an invariant did not hold. Please report it.
    Internal,
}

impl ErrorKind {
    /// Every kind, in code order. Binding tests iterate this to prove each kind has a C code and a
    /// Python exception class.
    pub const ALL: [ErrorKind; 14] = [
        ErrorKind::InvalidInput,
        ErrorKind::NotFound,
        ErrorKind::AlreadyExists,
        ErrorKind::Database,
        ErrorKind::Busy,
        ErrorKind::Corrupt,
        ErrorKind::SchemaTooNew,
        ErrorKind::Io,
        ErrorKind::ModelUnavailable,
        ErrorKind::Model,
        ErrorKind::Translation,
        ErrorKind::Import,
        ErrorKind::RotationRefused,
        ErrorKind::Internal,
    ];

    /// The stable numeric code of this kind, shared by the C ABI and the Python bindings.
    ///
    /// Codes are never reused; see `docs/errors.md` for the table.
    pub const fn code(self) -> u32 {
        match self {
            ErrorKind::InvalidInput => 1,
            ErrorKind::NotFound => 2,
            ErrorKind::AlreadyExists => 3,
            ErrorKind::Database => 4,
            ErrorKind::Busy => 5,
            ErrorKind::Corrupt => 6,
            ErrorKind::SchemaTooNew => 7,
            ErrorKind::Io => 8,
            ErrorKind::ModelUnavailable => 9,
            ErrorKind::Model => 10,
            ErrorKind::Translation => 11,
            ErrorKind::Import => 12,
            ErrorKind::RotationRefused => 13,
            ErrorKind::Internal => 14,
        }
    }

    /// The kind with this code, if any.
    pub fn from_code(code: u32) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// A short snake_case name, used in JSON error results and as the stem of binding names.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::NotFound => "not_found",
            ErrorKind::AlreadyExists => "already_exists",
            ErrorKind::Database => "database",
            ErrorKind::Busy => "busy",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::SchemaTooNew => "schema_too_new",
            ErrorKind::Io => "io",
            ErrorKind::ModelUnavailable => "model_unavailable",
            ErrorKind::Model => "model",
            ErrorKind::Translation => "translation",
            ErrorKind::Import => "import",
            ErrorKind::RotationRefused => "rotation_refused",
            ErrorKind::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A boxed source error from a dependency or the operating system.
pub type BoxedSource = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The error type of every fallible codeoid operation.
///
/// `Display` prints the message only; the underlying cause, when there is one, is returned by
/// [`std::error::Error::source`] and is not repeated in the message. Use [`Error::full_message`]
/// where the chain would otherwise be lost (C, Python).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
    #[source]
    source: Option<BoxedSource>,
}

/// `std::result::Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with a message for the person who has to fix it.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// Attaches the underlying cause.
    #[must_use]
    pub fn with_source(mut self, source: impl Into<BoxedSource>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// [`ErrorKind::InvalidInput`] with `message`.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidInput, message)
    }

    /// [`ErrorKind::NotFound`] with `message`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::NotFound, message)
    }

    /// [`ErrorKind::Internal`] with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Internal, message)
    }

    /// An [`ErrorKind::Io`] error for an operation on `path`.
    pub fn io(what: impl fmt::Display, path: &std::path::Path, source: std::io::Error) -> Self {
        Error::new(ErrorKind::Io, format!("cannot {what} {}", path.display())).with_source(source)
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message without its causes.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message followed by every cause in the chain, separated by `: `.
    pub fn full_message(&self) -> String {
        let mut out = self.message.clone();
        let mut next = std::error::Error::source(self);
        while let Some(cause) = next {
            out.push_str(": ");
            out.push_str(&cause.to_string());
            next = cause.source();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_round_trip() {
        let mut seen = HashSet::new();
        for kind in ErrorKind::ALL {
            assert!(seen.insert(kind.code()), "duplicate code {}", kind.code());
            assert_eq!(ErrorKind::from_code(kind.code()), Some(kind));
        }
        assert_eq!(ErrorKind::from_code(0), None);
    }

    #[test]
    fn display_hides_source_but_full_message_keeps_it() {
        let err = Error::invalid_input("bad turn").with_source(std::io::Error::other("underlying"));
        assert_eq!(err.to_string(), "bad turn");
        assert_eq!(err.full_message(), "bad turn: underlying");
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }
}
