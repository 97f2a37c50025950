//! Every case of `cases/` on a real Valkey (spawned, or `VALKEY_URL`), the
//! ones that take Valkey down included, through core, through the tower
//! layer and through a tonic server behind it. Without a server these tests fail, saying how to get one.

use std::path::PathBuf;

use ratelimit_conformance::{case_files, load_case, ValkeyEnv, Verdict, Via};

fn cases() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases");
    let files = case_files(&dir).expect("cases/ exists");
    assert!(files.len() >= 17, "the shared cases were copied in");
    files
}

async fn every_case(via: Via) {
    let env = ValkeyEnv::start().unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    for f in cases() {
        let case = load_case(&f).expect("case parses");
        match env.run(&case, via).await {
            Verdict::Passed => {}
            Verdict::Failed(why) => failures.push(format!("{}: {why}", f.display())),
            Verdict::Skipped(why) => {
                failures.push(format!("{}: skipped on valkey: {why}", f.display()))
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_case_passes_on_valkey() {
    every_case(Via::Core).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_case_passes_on_valkey_through_the_tower_layer() {
    every_case(Via::Tower).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_case_passes_on_valkey_through_a_tonic_server() {
    every_case(Via::Grpc).await;
}
