//! `__repr__` text in Python's own notation (`'text'`, `None`, `True`, `[...]`), so result
//! objects print the way Python programmers read them.

/// A value that can be shown as Python would show it.
pub(crate) trait Repr {
    /// The Python `repr()` of the value.
    fn repr(&self) -> String;
}

impl Repr for str {
    fn repr(&self) -> String {
        let quote = if self.contains('\'') && !self.contains('"') {
            '"'
        } else {
            '\''
        };
        let mut out = String::with_capacity(self.len() + 2);
        out.push(quote);
        for c in self.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c == quote => {
                    out.push('\\');
                    out.push(c);
                }
                c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push(quote);
        out
    }
}

impl Repr for String {
    fn repr(&self) -> String {
        self.as_str().repr()
    }
}

impl Repr for &str {
    fn repr(&self) -> String {
        (*self).repr()
    }
}

impl Repr for bool {
    fn repr(&self) -> String {
        if *self { "True" } else { "False" }.to_string()
    }
}

macro_rules! display_repr {
    ($($t:ty),*) => {$(
        impl Repr for $t {
            fn repr(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
display_repr!(u32, u64, i32, usize);

impl Repr for f64 {
    /// Rust's `Debug` form, which keeps the `.0` of a whole number as Python does (`0.0`).
    fn repr(&self) -> String {
        format!("{self:?}")
    }
}

impl<T: Repr> Repr for Option<T> {
    fn repr(&self) -> String {
        match self {
            Some(value) => value.repr(),
            None => "None".to_string(),
        }
    }
}

impl<T: Repr> Repr for Vec<T> {
    fn repr(&self) -> String {
        let items: Vec<String> = self.iter().map(Repr::repr).collect();
        format!("[{}]", items.join(", "))
    }
}

/// `Name(field=value, ...)`.
pub(crate) fn fields(name: &str, fields: &[(&str, &dyn Repr)]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|(field, value)| format!("{field}={}", value.repr()))
        .collect();
    format!("{name}({})", parts.join(", "))
}
