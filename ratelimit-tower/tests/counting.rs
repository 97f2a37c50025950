//! Counting responses: `count_statuses` rules count the upstream's answers,
//! never the limiter's own.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use support::*;

/// Counts how many requests reached the upstream.
#[derive(Clone, Default)]
struct Hits(Arc<AtomicUsize>);

impl Hits {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }

    fn answer(&self, status: StatusCode) -> StatusCode {
        self.0.fetch_add(1, Ordering::SeqCst);
        status
    }
}

#[tokio::test]
async fn a_404_count_rule_blocks_from_the_penalty_cache() {
    let json = r#"[{"id": "404-sweep", "expression": "starts_with(http.request.uri.path, \"/files/\")",
        "algorithm": "fixed_window", "limit": 3, "period": "1m", "key": ["ip"],
        "penalty": "10m", "count_statuses": ["404"]}]"#;
    let clock = clock();
    let hits = Hits::default();
    let h = hits.clone();
    let app = Router::new()
        .route(
            "/files/{name}",
            get(move || async move { h.answer(StatusCode::NOT_FOUND) }),
        )
        .route("/ok", get(ok))
        .layer(layer(json, &clock));
    let addr = serve_axum(app).await;
    // The answer that goes over the limit is already sent: four 404s.
    for i in 0..4 {
        let r = hit(addr, &format!("/files/f{i}")).await;
        assert_eq!(r.status, 404, "request {i}");
    }
    assert_eq!(hits.get(), 4);
    // Then the key is blocked for the penalty without reaching the upstream.
    let r = hit(addr, "/files/f9").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("600"));
    assert_eq!(r.body, r#"{"error":"rate_limited","retry_after":600}"#);
    assert_eq!(hits.get(), 4, "the upstream was not called");
    // Paths the rule does not match are not blocked.
    assert_eq!(hit(addr, "/ok").await.status, 200);
    // After the penalty, requests reach the upstream again.
    advance(&clock, 600);
    assert_eq!(hit(addr, "/files/again").await.status, 404);
    assert_eq!(hits.get(), 5);
}

#[tokio::test]
async fn only_counted_statuses_count() {
    let json = r#"[{"id": "404s", "expression": "true", "algorithm": "fixed_window",
        "limit": 1, "period": "1m", "key": ["ip"], "count_statuses": ["404"]}]"#;
    let clock = clock();
    let addr = serve_axum(
        Router::new()
            .route("/ok", get(ok))
            .layer(layer(json, &clock)),
    )
    .await;
    // 200s are not counted, whatever their number.
    assert_eq!(statuses(addr, "/ok", 5).await, [200; 5]);
    // The router's own 404 (no route) is the upstream's answer: counted.
    assert_eq!(statuses(addr, "/missing", 3).await, [404, 404, 429]);
}

#[tokio::test]
async fn the_limiters_own_429s_are_not_counted() {
    let json = r#"[
        {"id": "busy", "expression": "http.request.uri.path eq \"/busy\"",
         "algorithm": "fixed_window", "limit": 1, "period": "1m", "key": ["ip"]},
        {"id": "429s", "expression": "true", "algorithm": "fixed_window",
         "limit": 1, "period": "1h", "key": ["ip"], "count_statuses": ["429"]}
    ]"#;
    let clock = clock();
    let hits = Hits::default();
    let h = hits.clone();
    let app = Router::new()
        .route("/busy", get(ok))
        .route(
            "/upstream429",
            get(move || async move { h.answer(StatusCode::TOO_MANY_REQUESTS) }),
        )
        .layer(layer(json, &clock));
    let addr = serve_axum(app).await;
    // One admitted, then four 429s from the limiter itself.
    assert_eq!(statuses(addr, "/busy", 5).await, [200, 429, 429, 429, 429]);
    // The `busy` window resets; the `429s` hour has not: had the limiter's
    // answers been counted, this would be blocked.
    advance(&clock, 60);
    assert_eq!(hit(addr, "/busy").await.status, 200);
    // The upstream's 429s are counted: the second goes over, the third is
    // the limiter's answer.
    let r = statuses(addr, "/upstream429", 3).await;
    assert_eq!(r, [429, 429, 429]);
    assert_eq!(hits.get(), 2, "the third never reached the upstream");
    let r = hit(addr, "/upstream429").await;
    assert_eq!(r.body, r#"{"error":"rate_limited","retry_after":3540}"#);
}
