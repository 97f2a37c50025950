//! Every case of `cases/` on the in-memory backend, through core, the
//! tower layer and a tonic server behind it.

use std::path::PathBuf;

use ratelimit_conformance::{case_files, load_case, run_memory, run_memory_via, Verdict, Via};

fn cases() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases");
    let files = case_files(&dir).expect("cases/ exists");
    assert!(files.len() >= 17, "the shared cases were copied in");
    files
}

#[tokio::test]
async fn every_case_passes_on_memory_or_is_valkey_only() {
    every_case(Via::Core).await;
}

#[tokio::test]
async fn every_case_passes_through_the_tower_layer() {
    every_case(Via::Tower).await;
}

#[tokio::test]
async fn every_case_passes_through_a_tonic_server() {
    every_case(Via::Grpc).await;
}

async fn every_case(via: Via) {
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    for f in cases() {
        let case = load_case(&f).expect("case parses");
        match run_memory_via(&case, via).await {
            Verdict::Passed => {}
            Verdict::Failed(why) => failures.push(format!("{}: {why}", f.display())),
            Verdict::Skipped(_) => {
                assert!(!case.applies_to("memory"));
                skipped.push(f);
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    for f in &skipped {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        assert!(
            name.starts_with("valkey_down"),
            "only the valkey-down cases skip memory: {name}"
        );
    }
}

fn case_from(json: &str) -> ratelimit_conformance::Case {
    serde_json::from_str(json).expect("parses")
}

const RULE: &str = r#"{"id": "r", "expression": "true", "algorithm": "fixed_window",
    "limit": 1, "period": "1m", "key": ["ip"]}"#;

#[tokio::test]
async fn a_wrong_expectation_fails_the_case() {
    let case = case_from(&format!(
        r#"{{"name": "x", "rules": [{RULE}], "steps": [
        {{"at": 0, "repeat": 2, "request": {{"ip": "192.0.2.1"}}, "expect": {{"status": 200}}}}]}}"#
    ));
    assert!(matches!(run_memory(&case).await, Verdict::Failed(m) if m.contains("got 429")));
}

#[tokio::test]
async fn a_wrong_retry_after_or_header_fails_the_case() {
    let case = case_from(&format!(
        r#"{{"name": "x", "rules": [{RULE}], "steps": [
        {{"at": 0, "request": {{"ip": "192.0.2.1"}}, "expect": {{"status": 200}}}},
        {{"at": 1, "request": {{"ip": "192.0.2.1"}}, "expect": {{"status": 429, "retry_after": 60}}}}]}}"#
    ));
    assert!(matches!(run_memory(&case).await, Verdict::Failed(m) if m.contains("Retry-After 60")));
    let case = case_from(&format!(
        r#"{{"name": "x", "rules": [{RULE}], "steps": [
        {{"at": 0, "request": {{"ip": "192.0.2.1"}}, "expect": {{"status": 200, "headers": {{"RateLimit": "x"}}}}}}]}}"#
    ));
    assert!(matches!(run_memory(&case).await, Verdict::Failed(_)));
}

#[test]
fn an_unknown_field_fails_the_case() {
    for json in [
        format!(r#"{{"name": "x", "rules": [{RULE}], "steps": [], "colour": 1}}"#),
        format!(
            r#"{{"name": "x", "rules": [{RULE}], "steps": [{{"at": 0, "valkey": "down", "why": 1}}]}}"#
        ),
        format!(
            r#"{{"name": "x", "rules": [{RULE}], "steps": [{{"at": 0, "request": {{"ip": "1.2.3.4", "cookie": "a"}}, "expect": {{"status": 200}}}}]}}"#
        ),
        format!(
            r#"{{"name": "x", "rules": [{RULE}], "steps": [{{"at": 0, "request": {{"ip": "1.2.3.4"}}, "expect": {{"status": 200, "body": "x"}}}}]}}"#
        ),
    ] {
        assert!(
            serde_json::from_str::<ratelimit_conformance::Case>(&json).is_err(),
            "{json}"
        );
    }
}

#[tokio::test]
async fn expect_invalid_fails_when_the_rules_load() {
    let case = case_from(&format!(
        r#"{{"name": "x", "rules": [{RULE}], "expect_invalid": true}}"#
    ));
    assert!(matches!(run_memory(&case).await, Verdict::Failed(_)));
}

#[tokio::test]
async fn a_valkey_step_on_memory_fails_instead_of_passing() {
    let case = case_from(&format!(
        r#"{{"name": "x", "backends": ["memory"], "rules": [{RULE}], "steps": [{{"at": 0, "valkey": "down"}}]}}"#
    ));
    assert!(matches!(run_memory(&case).await, Verdict::Failed(_)));
}

#[tokio::test]
async fn fleet_steps_that_cannot_be_played_fail_the_case() {
    let bad_set = r#"[{"id": "r", "expression": "true", "algorithm": "fixed_window",
        "limit": 0, "period": "1m", "key": ["ip"]}]"#;
    for (steps, says) in [
        (
            r#"{"at": 0, "instance": 1, "request": {"ip": "192.0.2.1"}, "expect": {"status": 200}}"#.to_owned(),
            "instance 1 does not exist",
        ),
        (format!(r#"{{"at": 0, "publish": {bad_set}}}"#), "field \"limit\""),
        (
            format!(r#"{{"at": 0, "publish": [{RULE}], "request": {{"ip": "192.0.2.1"}}, "expect": {{"status": 200}}}}"#),
            "publish goes alone",
        ),
        (r#"{"at": 0, "instance": 0}"#.to_owned(), "instance goes with a request"),
    ] {
        let case = case_from(&format!(
            r#"{{"name": "x", "rules": [{RULE}], "steps": [{steps}]}}"#
        ));
        let verdict = run_memory(&case).await;
        assert!(
            matches!(&verdict, Verdict::Failed(m) if m.contains(says)),
            "{steps}: {verdict:?}"
        );
    }
    let case = case_from(&format!(
        r#"{{"name": "x", "instances": 9, "rules": [{RULE}], "steps": []}}"#
    ));
    assert!(
        matches!(run_memory(&case).await, Verdict::Failed(m) if m.contains("instances must be 1 to 8"))
    );
}
