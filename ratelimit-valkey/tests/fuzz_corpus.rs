//! Replays the `valkey_reply` fuzz corpus (`fuzz/corpus/valkey_reply`) as an
//! ordinary test: the reply decoder must not panic on any of it.

use std::path::PathBuf;

#[test]
fn the_reply_decoder_survives_its_fuzz_corpus() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/valkey_reply");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    assert!(files.len() >= 5, "the corpus is there: {}", files.len());
    for f in files {
        let data = std::fs::read(&f).expect("readable");
        ratelimit_valkey::fuzzing::reply(&data);
    }
}
