//! Hot reload: publish a JSON rule file again whenever it changes.
//!
//! Serves a small axum app on 127.0.0.1:3001 (PORT to change) behind the
//! rules of a file (default `examples/rules/api.json`, or the first
//! argument), checks the file's modification time every second with tokio,
//! and on a change validates and publishes it: counts of unchanged rules
//! carry over. Warnings are printed; a file that does not load is reported
//! and the running rules stay.
//!
//! ```text
//! cargo run --example reload -- /tmp/rules.json
//! curl -s localhost:3001/rules      # the running rules, exported as JSON
//! # edit /tmp/rules.json, save, and watch the output
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use axum::routing::get;
use axum::Router;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_tower::RateLimitLayer;

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn load(path: &Path) -> Result<RuleSet, String> {
    let json = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    RuleSet::from_json(&json).map_err(|e| e.to_string())
}

fn describe(set: &RuleSet) -> String {
    let rules: Vec<String> = set
        .rules()
        .iter()
        .map(|r| format!("{} ({}/{}s)", r.id, r.limit, r.period_ms / 1000))
        .collect();
    rules.join(", ")
}

/// Polls `path` every second and publishes it on `limiter` when it changes.
async fn watch(path: PathBuf, limiter: Limiter) {
    let mut last = mtime(&path);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let now = mtime(&path);
        if now == last {
            continue;
        }
        last = now;
        match load(&path) {
            Ok(set) => {
                for w in set.warnings() {
                    println!("warning: {w}");
                }
                println!("published: {}", describe(&set));
                limiter.publish(set);
            }
            Err(e) => eprintln!("error: {}: {e}; keeping the running rules", path.display()),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/api.json"));
    let set = load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    for w in set.warnings() {
        println!("warning: {w}");
    }
    println!("loaded {}: {}", path.display(), describe(&set));
    let layer = RateLimitLayer::from_rules(set);
    let shown = path.clone();
    tokio::spawn(watch(path, layer.limiter().clone()));
    let limiter = layer.limiter().clone();

    let app = Router::new()
        .route("/", get(|| async { "ok\n" }))
        .route(
            "/login",
            get(|| async { "welcome\n" }).post(|| async { "welcome\n" }),
        )
        // The running rules, exported as JSON that loads back.
        .route(
            "/rules",
            get(move || async move { limiter.rules().to_json() + "\n" }),
        )
        .layer(layer.for_axum());
    let port = std::env::var("PORT").unwrap_or_else(|_| "3001".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    let addr = listener.local_addr()?;
    println!("listening on http://{addr}");
    println!("try:");
    println!("  curl -i {addr}/");
    println!("  curl -i -X POST {addr}/login    # over the login rule's limit: 429");
    println!("  curl -s {addr}/rules            # the running rules, as JSON");
    println!(
        "then edit {} and save: the next request runs the new rules",
        shown.display()
    );
    let make = app.into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, make).await?;
    Ok(())
}
