//! The command line's words: positionals and options, each command saying
//! which options it takes and which of them take a value.
//!
//! Hand-written: four commands with a handful of options each do not need
//! a parser crate.

use std::fmt;

/// A command line that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// An option a command takes.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    /// Its long name, with the dashes (`--format`).
    pub long: &'static str,
    /// A short name (`-H`), if any.
    pub short: Option<&'static str>,
    /// Whether a value follows.
    pub takes_value: bool,
}

/// The parsed words of one command.
#[derive(Debug, Clone, Default)]
pub struct Args {
    /// Words that are not options, in order.
    pub positionals: Vec<String>,
    /// Options in order, by long name, with their values.
    pub options: Vec<(&'static str, Option<String>)>,
}

impl Args {
    /// Parses `words` against `opts`: `--name value`, `--name=value`,
    /// `-H value`; `--` ends the options.
    ///
    /// # Errors
    ///
    /// An unknown option, or one missing its value.
    pub fn parse(words: &[String], opts: &[Opt]) -> Result<Args, UsageError> {
        let mut out = Args::default();
        let mut it = words.iter();
        while let Some(w) = it.next() {
            if w == "--" {
                out.positionals.extend(it.by_ref().cloned());
                break;
            }
            if !w.starts_with('-') || w == "-" {
                out.positionals.push(w.clone());
                continue;
            }
            let (name, inline) = match w.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v.to_owned())),
                _ => (w.as_str(), None),
            };
            let opt = opts
                .iter()
                .find(|o| o.long == name || o.short == Some(name))
                .ok_or_else(|| UsageError(format!("unknown option {name}")))?;
            let value = match (opt.takes_value, inline) {
                (true, Some(v)) => Some(v),
                (true, None) => Some(
                    it.next()
                        .cloned()
                        .ok_or_else(|| UsageError(format!("{} needs a value", opt.long)))?,
                ),
                (false, None) => None,
                (false, Some(_)) => {
                    return Err(UsageError(format!("{} takes no value", opt.long)));
                }
            };
            out.options.push((opt.long, value));
        }
        Ok(out)
    }

    /// Whether flag `long` was given.
    pub fn flag(&self, long: &str) -> bool {
        self.options.iter().any(|(n, _)| *n == long)
    }

    /// The last value of option `long`.
    pub fn value(&self, long: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| *n == long)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Every value of option `long`, in order.
    pub fn values<'a>(&'a self, long: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.options
            .iter()
            .filter(move |(n, _)| *n == long)
            .filter_map(|(_, v)| v.as_deref())
    }
}

/// An option with a value.
pub const fn valued(long: &'static str) -> Opt {
    Opt {
        long,
        short: None,
        takes_value: true,
    }
}

/// A flag.
pub const fn flag(long: &'static str) -> Opt {
    Opt {
        long,
        short: None,
        takes_value: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn options_values_and_positionals() {
        let opts = [
            valued("--format"),
            flag("--deny-warnings"),
            Opt {
                long: "--header",
                short: Some("-H"),
                takes_value: true,
            },
        ];
        let a = Args::parse(
            &words(&[
                "a.json",
                "--format=json",
                "-H",
                "x: 1",
                "--deny-warnings",
                "--",
                "-b",
            ]),
            &opts,
        )
        .unwrap();
        assert_eq!(a.positionals, ["a.json", "-b"]);
        assert_eq!(a.value("--format"), Some("json"));
        assert_eq!(a.values("--header").collect::<Vec<_>>(), ["x: 1"]);
        assert!(a.flag("--deny-warnings"));
        let e = Args::parse(&words(&["--nope"]), &opts).unwrap_err();
        assert_eq!(e.0, "unknown option --nope");
        let e = Args::parse(&words(&["--format"]), &opts).unwrap_err();
        assert_eq!(e.0, "--format needs a value");
    }
}
