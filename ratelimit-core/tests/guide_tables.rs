//! Every table of the guide (`docs/*.md`) and the README has as many cells
//! in each row as in its header: a row with one more loses its last cell
//! when rendered (issue 27, item 16: the `cost` row of the rules' field
//! table lost its default that way).

use std::path::{Path, PathBuf};

/// The guide's chapters, the README and DEVELOPERS.md.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.push(root.join("README.md"));
    docs.push(root.join("DEVELOPERS.md"));
    docs
}

/// The cells of a table row, as GitHub splits them: on every `|` not
/// escaped with a backslash (code spans included), less the outer ones.
fn cells(row: &str) -> usize {
    let row = row.trim();
    let mut count = 0;
    let mut escaped = false;
    for c in row.chars() {
        match c {
            '\\' => escaped = !escaped,
            '|' if !escaped => count += 1,
            _ => escaped = false,
        }
    }
    let outer = usize::from(row.starts_with('|')) + usize::from(row.ends_with('|'));
    count + 1 - outer
}

/// What is wrong with the tables of `md`: rows whose cells differ from
/// their header's, by line.
fn uneven_rows(md: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut header: Option<usize> = None;
    let mut fenced = false;
    for (i, line) in md.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !t.starts_with('|') {
            header = None;
            continue;
        }
        match header {
            None => header = Some(cells(t)),
            Some(n) if cells(t) != n => problems.push(format!(
                "line {}: {} cells, the header has {n}: {t}",
                i + 1,
                cells(t)
            )),
            Some(_) => {}
        }
    }
    problems
}

#[test]
fn every_row_of_every_table_has_its_headers_cells() {
    let mut problems = Vec::new();
    let mut tables = 0;
    for doc in documents() {
        let md = std::fs::read_to_string(&doc).unwrap();
        tables += md.lines().filter(|l| l.trim().starts_with("| ---")).count();
        let name = doc.file_name().unwrap().to_string_lossy().into_owned();
        problems.extend(uneven_rows(&md).into_iter().map(|p| format!("{name} {p}")));
    }
    assert!(tables >= 20, "the tables were found ({tables})");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_cell_counter_splits_as_github_does() {
    assert_eq!(cells("| a | b |"), 2);
    assert_eq!(cells("| `a \\| b` | c |"), 2, "an escaped pipe");
    assert_eq!(cells("| a | b | | 1 |"), 4, "an empty cell counts");
    assert_eq!(cells("a | b"), 2);
    let md = "| h | i |\n| --- | --- |\n| x | y | z |\n\n| j |\n| --- |\n| k |\n";
    assert_eq!(uneven_rows(md).len(), 1);
    assert!(
        uneven_rows("```\n| a |\n| b | c |\n```\n").is_empty(),
        "code blocks are not tables"
    );
}
