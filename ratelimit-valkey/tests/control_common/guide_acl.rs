//! The guide's ACL set-up (docs/fleet.md, "Who may write the control
//! keys"), read as written: its `ACL SETUSER` lines, and its table of what
//! each user may do with each key.

use std::collections::BTreeSet;

/// The guide's chapter.
const GUIDE: &str = include_str!("../../../docs/fleet.md");

/// The password a test gives `user` (the guide writes `>…`).
pub(crate) fn password(user: &str) -> String {
    format!("pw-{user}")
}

/// `url` as `user`, with [`password`].
pub(crate) fn as_user(url: &str, user: &str) -> String {
    url.replacen(
        "redis://",
        &format!("redis://{user}:{}@", password(user)),
        1,
    )
}

/// The arguments of each `ACL SETUSER` line of the guide (a line and the
/// indented lines that continue it), `>…` replaced by [`password`].
pub(crate) fn setuser_lines() -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut open = false;
    for line in GUIDE.lines() {
        if let Some(rest) = line.strip_prefix("ACL SETUSER ") {
            out.push(rest.split_whitespace().map(str::to_owned).collect());
            open = true;
        } else if open && line.starts_with(' ') {
            if let Some(last) = out.last_mut() {
                last.extend(line.split_whitespace().map(str::to_owned));
            }
        } else {
            open = false;
        }
    }
    for words in &mut out {
        let user = words[0].clone();
        for w in words.iter_mut() {
            if w == ">…" {
                *w = format!(">{}", password(&user));
            }
        }
    }
    assert!(out.len() >= 3, "the guide's ACL SETUSER lines: {out:?}");
    out
}

/// One row of the table: a key (or a channel) and what each user may do.
#[derive(Debug)]
pub(crate) struct Row {
    /// As the guide writes it: `rl:{…}`, `rl:control{ctl}:instance:<id>`.
    pub(crate) key: String,
    pub(crate) channel: bool,
    /// For each of [`Table::users`], its words (`read`, `write`, ...);
    /// empty for `—`.
    pub(crate) may: Vec<BTreeSet<String>>,
}

/// The table of what each user may do.
#[derive(Debug)]
pub(crate) struct Table {
    /// The users of its columns, in order.
    pub(crate) users: Vec<String>,
    pub(crate) rows: Vec<Row>,
}

fn cells(line: &str) -> Vec<&str> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(str::trim).collect()
}

fn in_backticks(s: &str) -> &str {
    s.split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no `name` in {s:?}"))
}

/// The guide's table whose header starts `| key |` and names `rl-follower`.
pub(crate) fn table() -> Table {
    let mut lines = GUIDE
        .lines()
        .skip_while(|l| !(l.starts_with("| key |") && l.contains("rl-follower")));
    let header = lines
        .next()
        .expect("the guide's table of what each user may do");
    let users: Vec<String> = cells(header)[1..]
        .iter()
        .map(|c| in_backticks(c).to_owned())
        .collect();
    let mut rows = Vec::new();
    for line in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let c = cells(line);
        assert_eq!(c.len(), users.len() + 1, "a cell for each user: {line}");
        let may = c[1..]
            .iter()
            .map(|cell| match *cell {
                "—" => BTreeSet::new(),
                words => words.split(", ").map(str::to_owned).collect(),
            })
            .collect();
        rows.push(Row {
            key: in_backticks(c[0]).to_owned(),
            channel: c[0].contains("(channel)"),
            may,
        });
    }
    assert!(rows.len() >= 10, "the table's rows: {rows:?}");
    Table { users, rows }
}
