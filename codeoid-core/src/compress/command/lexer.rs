//! The lexer under [`super::CommandShape`]: a shell command line as words and operators.
//!
//! Words come out with quotes removed and escapes applied; `$( … )` and backtick substitutions
//! stay verbatim inside the word that holds them. Operators are reduced to the three kinds rule
//! matching cares about (sequence, background, pipe). The target of an output redirection
//! (`> file`, `>> file`, `2> file`, `&> file`) comes out as its own token, the file a command
//! writes; other redirections (`2>&1`, `< file`, `<<<word`), comments and heredoc bodies are
//! dropped.
//!
//! This is not a shell: no expansion of any kind, and it never fails. Unbalanced quotes run to
//! the end of the text.

/// An operator between commands, by what it means for matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// `&&`, `||`, `;`, newline: the next pipeline starts.
    Sequence,
    /// `&`: the pipeline before it runs in the background.
    Background,
    /// `|` or `|&`.
    Pipe,
}

/// One token of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    /// A word, quotes removed.
    Word(String),
    /// An operator.
    Op(Op),
    /// The target of an output redirection, quotes removed: a file the command writes.
    Written(String),
}

/// What the next word of the command line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NextWord {
    /// A word of the command.
    Argument,
    /// The target of an input redirection (`< file`, `<<<word`): dropped.
    Dropped,
    /// The target of an output redirection.
    Written,
}

/// Splits a command line into words and operators, dropping redirections, comments and heredoc
/// bodies.
pub(super) fn lex(command: &str) -> Vec<Token> {
    let chars: Vec<char> = command.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        pos: 0,
        tokens: Vec::new(),
        word: String::new(),
        in_word: false,
        next_word: NextWord::Argument,
        heredocs: Vec::new(),
    };
    lexer.run();
    lexer.tokens
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    tokens: Vec<Token>,
    word: String,
    in_word: bool,
    /// Whether the next word is a redirection target (`> file`), not an argument.
    next_word: NextWord,
    /// Heredoc delimiters waiting for the end of the current line, with whether `<<-` allows
    /// leading tabs before the delimiter.
    heredocs: Vec<(String, bool)>,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '\\' => {
                    if let Some(next) = self.peek(1) {
                        if next != '\n' {
                            self.push_char(next);
                        }
                        self.pos += 2;
                    } else {
                        self.pos += 1;
                    }
                }
                '$' if self.peek(1) == Some('(') => self.nested('(', ')', 2),
                '`' => self.nested('`', '`', 1),
                '#' if !self.in_word => self.comment(),
                ' ' | '\t' => {
                    self.end_word();
                    self.pos += 1;
                }
                '\n' => {
                    self.end_word();
                    self.op(Op::Sequence);
                    self.pos += 1;
                    self.heredoc_bodies();
                }
                ';' => {
                    self.end_word();
                    self.op(Op::Sequence);
                    self.pos += 1;
                }
                '&' => self.ampersand(),
                '|' => {
                    self.end_word();
                    if self.peek(1) == Some('|') {
                        self.op(Op::Sequence);
                        self.pos += 2;
                    } else {
                        self.op(Op::Pipe);
                        self.pos += if self.peek(1) == Some('&') { 2 } else { 1 };
                    }
                }
                '(' | ')' | '{' | '}' if !self.in_word => {
                    // Subshells and groups: their commands count as if written without them.
                    self.pos += 1;
                }
                '<' | '>' => self.redirection(),
                _ => {
                    self.push_char(c);
                    self.pos += 1;
                }
            }
        }
        self.end_word();
    }

    fn push_char(&mut self, c: char) {
        self.word.push(c);
        self.in_word = true;
    }

    fn end_word(&mut self) {
        if self.in_word {
            let word = std::mem::take(&mut self.word);
            match std::mem::replace(&mut self.next_word, NextWord::Argument) {
                NextWord::Argument => self.tokens.push(Token::Word(word)),
                NextWord::Written => self.tokens.push(Token::Written(word)),
                NextWord::Dropped => {}
            }
            self.in_word = false;
        }
    }

    fn op(&mut self, op: Op) {
        self.next_word = NextWord::Argument;
        self.tokens.push(Token::Op(op));
    }

    fn single_quoted(&mut self) {
        self.in_word = true;
        self.pos += 1;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            if c == '\'' {
                return;
            }
            self.word.push(c);
        }
    }

    fn double_quoted(&mut self) {
        self.in_word = true;
        self.pos += 1;
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' if matches!(self.peek(1), Some('"' | '\\' | '$' | '`')) => {
                    if let Some(next) = self.peek(1) {
                        self.word.push(next);
                    }
                    self.pos += 2;
                }
                '$' if self.peek(1) == Some('(') => self.nested('(', ')', 2),
                _ => {
                    self.word.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// Copies a `$( … )` or backtick substitution verbatim into the current word.
    fn nested(&mut self, open: char, close: char, opener_len: usize) {
        self.in_word = true;
        for _ in 0..opener_len {
            if let Some(c) = self.peek(0) {
                self.word.push(c);
                self.pos += 1;
            }
        }
        let mut depth = 1usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            self.word.push(c);
            self.pos += 1;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') if open != '`' => quote = Some(c),
                (None, '\\') => {
                    if let Some(next) = self.peek(0) {
                        self.word.push(next);
                        self.pos += 1;
                    }
                }
                (None, c) if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                (None, c) if c == open && open != close => depth += 1,
                _ => {}
            }
        }
    }

    fn comment(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                return;
            }
            self.pos += 1;
        }
    }

    fn ampersand(&mut self) {
        match self.peek(1) {
            Some('&') => {
                self.end_word();
                self.op(Op::Sequence);
                self.pos += 2;
            }
            Some('>') => {
                // `&>file` and `&>>file`: both streams to a file.
                self.end_word();
                self.pos += if self.peek(2) == Some('>') { 3 } else { 2 };
                self.next_word = NextWord::Written;
            }
            _ => {
                self.end_word();
                self.op(Op::Background);
                self.pos += 1;
            }
        }
    }

    /// `<`, `>`, `>>`, `2>`, `2>&1`, `<<EOF`, `<<-EOF`, `<<<word`, `>|`: the operator is dropped,
    /// and its target too unless output goes to a file (see [`Token::Written`]). A word of
    /// digits right before the operator is its file descriptor.
    fn redirection(&mut self) {
        if self.in_word && self.word.chars().all(|c| c.is_ascii_digit()) {
            self.word.clear();
            self.in_word = false;
        } else {
            self.end_word();
        }
        let first = self.peek(0);
        self.pos += 1;
        if first == Some('<') && self.peek(0) == Some('<') {
            self.pos += 1;
            if self.peek(0) == Some('<') {
                self.pos += 1;
                self.next_word = NextWord::Dropped;
                return;
            }
            let strip_tabs = self.peek(0) == Some('-');
            if strip_tabs {
                self.pos += 1;
            }
            self.heredoc_delimiter(strip_tabs);
            return;
        }
        if matches!(self.peek(0), Some('>' | '|')) {
            self.pos += 1;
        }
        if self.peek(0) == Some('&') {
            // `2>&1`, `>&2`, `<&3`: the target is a descriptor, not a word to skip.
            self.pos += 1;
            while matches!(self.peek(0), Some(c) if c.is_ascii_digit() || c == '-') {
                self.pos += 1;
            }
            return;
        }
        self.next_word = if first == Some('>') {
            NextWord::Written
        } else {
            NextWord::Dropped
        };
    }

    fn heredoc_delimiter(&mut self, strip_tabs: bool) {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let mut delimiter = String::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | ')' => break,
                '\'' | '"' | '\\' => self.pos += 1,
                _ => {
                    delimiter.push(c);
                    self.pos += 1;
                }
            }
        }
        if !delimiter.is_empty() {
            self.heredocs.push((delimiter, strip_tabs));
        }
    }

    /// After a newline: skips the body of every pending heredoc, line by line, up to its
    /// delimiter line.
    fn heredoc_bodies(&mut self) {
        let pending = std::mem::take(&mut self.heredocs);
        for (delimiter, strip_tabs) in pending {
            loop {
                let start = self.pos;
                if start >= self.chars.len() {
                    return;
                }
                let end = self.chars[start..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |n| start + n);
                let line: String = self.chars[start..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if line == delimiter {
                    break;
                }
            }
        }
    }
}
