//! Closed sets of named options — a fill rule, a trace format, a field choice — that users
//! pick by name. Each type lists its options, their names and one line of help once, here in
//! the libraries, so every front end (the command line, a config file, the daemon) offers and
//! explains the same names without a copy of its own.

/// A type whose values are picked by name from a fixed list.
pub trait Choice: Copy + 'static {
    /// Every option, in the order help lists them.
    const ALL: &'static [Self];

    /// The option's name as users write it.
    fn name(self) -> &'static str;

    /// What the option does, in one line.
    fn about(self) -> &'static str;

    /// The option named `name`, if any.
    fn named(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// The names, as an error message lists them: `a, b or c`.
    fn names() -> String {
        or_list(Self::ALL.iter().map(|c| c.name()))
    }
}

/// `items` as an error message lists them: `a, b or c`.
pub(crate) fn or_list(items: impl Iterator<Item = impl Into<String>>) -> String {
    let items: Vec<String> = items.map(Into::into).collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}
