//! The workflow's helpers: an admin page on a `MemoryControl`, its forms
//! posted with the page's CSRF pair, and traffic in minutes of a
//! `ManualClock`.

use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use ratelimit_admin::guard::Guard;
use ratelimit_admin::Admin;
use ratelimit_core::control::{Control, MemoryControl};
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};

use super::*;

const API: &str = r#"{"id": "api", "expression": "http.request.uri.path eq \"/api\"",
   "algorithm": "fixed_window", "limit": 5, "period": "1m", "key": ["ip"]}"#;

pub fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", urlencode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `n` requests to /api from `ip`.
pub async fn hit(l: &Limiter, ip: &str, n: usize) {
    let r = RequestAttrs::new(ip.parse().unwrap()).with_path("/api");
    for _ in 0..n {
        l.check(&r).await;
    }
}

/// `minutes` minutes of traffic: each minute, `per_min` requests from each
/// of `ips`.
pub async fn minutes(l: &Limiter, clock: &ManualClock, minutes: u32, ips: &[&str], per_min: usize) {
    for _ in 0..minutes {
        for ip in ips {
            hit(l, ip, per_min).await;
        }
        clock.advance(Duration::from_secs(60));
    }
}

/// The first addresses of 203.0.113.0/24 whose subject a 50% canary of
/// the `api` rule takes (`inside`) or leaves out.
pub fn clients(l: &Limiter, inside: bool, n: usize) -> Vec<String> {
    let mut rule = (**l.rules().get("api").unwrap()).clone();
    rule.canary_bp = Some(5_000);
    (1..=254)
        .map(|i| format!("203.0.113.{i}"))
        .filter(|ip| {
            let r = RequestAttrs::new(ip.parse().unwrap()).with_path("/api");
            rule.canary_includes(&l.subject_of("api", &r).unwrap()) == inside
        })
        .take(n)
        .collect()
}

pub struct Setup {
    pub l: Limiter,
    pub clock: ManualClock,
    pub control: Arc<MemoryControl>,
    pub app: axum::Router,
    pub cookie: String,
    pub token: String,
}

pub async fn setup() -> Setup {
    let (l, clock) = limiter();
    let control = Arc::new(MemoryControl::new(l.clone(), "edge-1"));
    let app = Admin::new(l.clone()).control(control.clone()).router();
    let (cookie, token) = cookie_and_token(&send(&app, get("/")).await);
    Setup {
        l,
        clock,
        control,
        app,
        cookie,
        token,
    }
}

impl Setup {
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let mut all = vec![("csrf", self.token.as_str())];
        all.extend_from_slice(fields);
        send(&self.app, post(path, Some(&self.cookie), &form(&all))).await
    }

    pub async fn version(&self) -> String {
        let v = self
            .control
            .current()
            .await
            .unwrap()
            .map_or(0, |p| p.version);
        v.to_string()
    }

    /// The published set with the `api` rule added (as the draft says: no
    /// action, i.e. block) and published from the page.
    pub async fn publish_api(&self) {
        let mut rules: Vec<serde_json::Value> =
            serde_json::from_str(&self.l.rules().to_json()).unwrap();
        rules.push(serde_json::from_str(API).unwrap());
        let json = serde_json::to_string(&rules).unwrap();
        let checked = self.post("/check", &[("json", &json)]).await;
        assert_eq!(checked.status, StatusCode::OK);
        assert!(
            checked.body.contains("rule &quot;api&quot; is new"),
            "the check says it lands in log"
        );
        let v = self.version().await;
        let a = self
            .post(
                "/publish",
                &[("json", &json), ("note", "alice: api"), ("version", &v)],
            )
            .await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    }

    pub async fn canary(&self, percent: &str) {
        let v = self.version().await;
        let a = self
            .post(
                "/canary",
                &[("rule", "api"), ("percent", percent), ("version", &v)],
            )
            .await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    }

    pub fn guard(&self) -> Guard {
        Guard::new(self.control.clone()).clock(self.clock.clone())
    }
}
