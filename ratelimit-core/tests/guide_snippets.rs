//! Issue 41: one way to each task. The README and the guide's Getting
//! started show the same code for the same step (the whole axum `main`,
//! the Valkey fleet), and the README reaches its first Rust code within
//! 300 words.

use std::path::Path;

fn read(doc: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(doc)).unwrap()
}

/// The fenced blocks of `md` that open with `fence`, each with its fences.
fn blocks<'a>(md: &'a str, fence: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = md;
    while let Some(start) = rest.find(&format!("\n{fence}\n")) {
        let body = &rest[start + 1..];
        let end = body[fence.len()..].find("\n```\n").expect("a closed block") + fence.len() + 5;
        out.push(&body[..end]);
        rest = &body[end..];
    }
    out
}

/// The block of `md` opening with `fence` whose code contains `marker`.
fn block<'a>(md: &'a str, fence: &str, marker: &str) -> &'a str {
    let found: Vec<&str> = blocks(md, fence)
        .into_iter()
        .filter(|b| b.contains(marker))
        .collect();
    assert_eq!(found.len(), 1, "one block with {marker:?}");
    found[0]
}

#[test]
fn the_readme_and_getting_started_show_one_axum_main_and_one_valkey_snippet() {
    let (readme, guide) = (read("README.md"), read("docs/getting-started.md"));
    let main = "into_make_service_with_connect_info::<SocketAddr>(),";
    assert_eq!(
        block(&readme, "```rust,no_run", main),
        block(&guide, "```rust,no_run", main)
    );
    let valkey = "FleetConfig::new(";
    let shown = block(&readme, "```rust,no_run", valkey);
    assert_eq!(shown, block(&guide, "```rust,no_run", valkey));
    assert!(shown.contains(".hash_key(HashKey::new(secret))"), "{shown}");
}

#[test]
fn the_readme_reaches_rust_code_within_300_words() {
    let readme = read("README.md");
    let before = &readme[..readme.find("```rust").unwrap()];
    let words = before.split_whitespace().count();
    assert!(words <= 300, "{words} words before the first Rust code");
}
