//! Two instances and one Valkey, operated as one fleet.
//!
//! Starts two instances of a small axum app in this process (as two pods
//! would run), each with its Valkey backend and a follower of the control
//! channel, then plays an operator: publishes a rule in `log`, promotes it
//! to `block`, flips the kill switch, lifts a penalty, and prints what each
//! instance answers and what the registry says after each step.
//!
//! ```text
//! valkey-server --port 6379 --save '' &
//! cargo run --example fleet                       # VALKEY_URL to change
//! ```
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use http::Request;
use ratelimit_core::control::{Control, Switch};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, RequestAttrs};
use ratelimit_tower::{ClientIp, RateLimitLayer};
use ratelimit_valkey::control::{FollowConfig, Follower, ValkeyControl};
use ratelimit_valkey::ValkeyBackend;
use tower::ServiceExt;

type Error = Box<dyn std::error::Error>;

/// One instance: its app behind the layer, its limiter and its follower.
struct Instance {
    name: &'static str,
    app: Router,
    limiter: Limiter,
    follower: Follower,
}

async fn instance(url: &str, prefix: &str, name: &'static str) -> Result<Instance, Error> {
    let backend = ValkeyBackend::builder(url)
        .key_prefix(prefix)
        .build()
        .await?;
    let limiter = Limiter::builder(RuleSet::default())
        .backend(backend)
        .build();
    let control = ValkeyControl::open(url, prefix)?.with_limiter(limiter.clone());
    let follower = control.follow(
        limiter.clone(),
        FollowConfig::new(name).report_every(Duration::from_secs(1)),
    );
    let app = Router::new()
        .route("/api", get(|| async { "ok\n" }))
        .layer(RateLimitLayer::new(limiter.clone()));
    Ok(Instance {
        name,
        app,
        limiter,
        follower,
    })
}

/// The status `inst` answers a GET /api from `ip`.
async fn get_api(inst: &Instance, ip: &str) -> Result<u16, Error> {
    let mut req = Request::get("/api").body(axum::body::Body::empty())?;
    req.extensions_mut().insert(ClientIp(ip.parse()?));
    let res = inst.app.clone().oneshot(req).await?;
    Ok(res.status().as_u16())
}

fn rule(action: &str) -> String {
    format!(
        r#"[{{"id": "api", "expression": "http.request.uri.path eq \"/api\"",
            "algorithm": "fixed_window", "limit": 3, "period": "1m", "key": ["ip"],
            "action": "{action}", "penalty": "5m"}}]"#
    )
}

/// Waits until both instances run `version`; prints how long it took.
async fn converge(fleet: &[Instance], version: u64) -> Result<(), Error> {
    let start = Instant::now();
    while fleet
        .iter()
        .any(|i| i.follower.running_version() != version)
    {
        if start.elapsed() > Duration::from_secs(5) {
            return Err(format!("version {version} not applied within 5 s").into());
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    println!(
        "  version {version} runs on both instances after {:?}",
        start.elapsed()
    );
    Ok(())
}

async fn traffic(fleet: &[Instance], ip: &str, n: usize) -> Result<(), Error> {
    let mut seen = Vec::new();
    for k in 0..n {
        let inst = &fleet[k % fleet.len()];
        seen.push(format!("{}:{}", inst.name, get_api(inst, ip).await?));
    }
    println!("  {ip}: {}", seen.join(" "));
    Ok(())
}

async fn registry(operator: &ValkeyControl) -> Result<(), Error> {
    let view = operator.fleet().await?;
    for r in &view.instances {
        let counts: Vec<String> = r
            .rules
            .iter()
            .map(|c| {
                format!(
                    "{} allowed {} limited {} would_limit {}",
                    c.rule, c.allowed, c.limited, c.would_limit
                )
            })
            .collect();
        println!(
            "  registry: {} runs v{}: {}",
            r.id,
            r.running_version,
            counts.join("; ")
        );
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let url = std::env::var("VALKEY_URL").unwrap_or_else(|_| "valkey://127.0.0.1:6379".into());
    let prefix = format!("fleet-example-{}:", std::process::id());
    let fleet = vec![
        instance(&url, &prefix, "edge-1").await?,
        instance(&url, &prefix, "edge-2").await?,
    ];
    let operator = ValkeyControl::open(&url, &prefix)?.with_limiter(fleet[0].limiter.clone());

    println!("1. publish the rule in log: both instances let everything through");
    let from = operator.current().await?.map_or(0, |p| p.version);
    let v = operator
        .publish(from, &rule("log"), "example: api in log", BTreeMap::new())
        .await?;
    converge(&fleet, v).await?;
    traffic(&fleet, "203.0.113.7", 5).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;

    println!("2. promote it to block: the count of step 1 carries over, a new client gets 3");
    let v = operator
        .publish(v, &rule("block"), "example: api blocks", BTreeMap::new())
        .await?;
    converge(&fleet, v).await?;
    traffic(&fleet, "203.0.113.7", 2).await?;
    traffic(&fleet, "203.0.113.8", 5).await?;

    println!("3. the kill switch, once, for the whole fleet");
    operator
        .set_switch(Switch::DisableRateLimiting, true)
        .await?;
    tokio::time::sleep(Duration::from_millis(50)).await;
    traffic(&fleet, "203.0.113.8", 2).await?;
    operator
        .set_switch(Switch::DisableRateLimiting, false)
        .await?;
    tokio::time::sleep(Duration::from_millis(50)).await;

    println!("4. lift 203.0.113.8's penalty on every instance");
    let who = RequestAttrs::new("203.0.113.8".parse()?).with_path("/api");
    let subject = fleet[0].limiter.subject_of("api", &who)?;
    operator.lift("api", subject).await?;
    tokio::time::sleep(Duration::from_millis(50)).await;
    traffic(&fleet, "203.0.113.8", 2).await?;

    tokio::time::sleep(Duration::from_millis(1100)).await;
    registry(&operator).await?;
    let lagging = operator.fleet().await?.lagging(v).len();
    println!("  instances not on version {v}: {lagging}");
    Ok(())
}
