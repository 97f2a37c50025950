//! Replays the committed fuzz corpora (`fuzz/corpus/<target>/`) through the
//! same functions the cargo-fuzz targets call, as ordinary tests: whatever
//! the fuzzers kept, and every reproducer of a fixed bug, keeps passing.

use std::fs;
use std::path::{Path, PathBuf};

use ratelimit_testkit::fuzz;

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|entry| entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())))
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .filter(|path| {
            // libFuzzer's lock and temporary files start with a dot.
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.'))
        })
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "corpus {} is empty: the replay would pass vacuously",
        dir.display()
    );
    files
}

fn replay(target: &str, run: fn(&[u8])) {
    for path in corpus(target) {
        let data = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(
            outcome.is_ok(),
            "{target}: {} panics; reproduce with `cargo fuzz run {target} {}`",
            path.display(),
            path.display()
        );
    }
}

#[test]
fn rules_json_corpus() {
    replay("rules_json", fuzz::rules_json);
}

#[test]
fn expression_corpus() {
    replay("expression", fuzz::expression);
}

#[test]
fn nginx_config_corpus() {
    replay("nginx_config", fuzz::nginx_config);
}

#[test]
fn request_keys_corpus() {
    replay("request_keys", fuzz::request_keys);
}

#[test]
fn valkey_reply_corpus() {
    let files = corpus("valkey_reply").len();
    assert!(files >= 5, "the corpus is there: {files}");
    replay("valkey_reply", fuzz::valkey_reply);
}

#[test]
fn access_log_corpus() {
    replay("access_log", fuzz::access_log);
}
