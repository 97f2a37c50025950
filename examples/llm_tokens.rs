//! An LLM-style completion endpoint metered in tokens per minute per API
//! key, charged after the response (`rules/llm_tokens.json`).
//!
//! - `tokens-per-minute`: each API key (`x-api-key`) may spend 1,000 tokens
//!   a minute (a token bucket of 1,000 refilled over a minute), with
//!   `"charge": "response"`: what a completion costs is known only once it
//!   is written, so the rule charges the response, not the request. A
//!   request is admitted while the key's budget is not spent; the
//!   completion that spends it goes through, and the next request is
//!   refused (429 with `Retry-After`) until the debt is refilled.
//! - The handler reports the prompt's tokens with the head
//!   (`ResponseCost`) and adds each completion token to the request's
//!   `Charge` as it streams it; the layer charges the sum when the body
//!   ends, or when the client hangs up mid-stream (what was produced is
//!   paid for).
//! - `per-ip`: 600 requests a minute per IP, the backstop a rule keyed on a
//!   header the client chooses needs.
//!
//! With `VALKEY_URL` set (`redis://127.0.0.1:6379`) every instance shares
//! the budgets through Valkey; otherwise it counts in memory.
//!
//! ```text
//! cargo run --example llm_tokens          # listens on 127.0.0.1:3004 (PORT to change)
//! curl -N -H 'x-api-key: demo' -d '{"prompt": "tell me a story", "max_tokens": 400}' \
//!     localhost:3004/v1/completions
//! ```
//!
//! It prints more curl commands to try.
#![allow(clippy::print_stdout)]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use bytes::Bytes;
use http::StatusCode;
use hyper::body::Frame;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::Limiter;
use ratelimit_tower::{Charge, RateLimitLayer, ResponseCost};
use tokio::time::Sleep;

/// The rules: tokens per minute per API key, and a per-IP backstop.
const RULES: &str = include_str!("rules/llm_tokens.json");

/// The most tokens one completion may ask for: it bounds how far past its
/// budget one request can take a key (a completion's cost is known only
/// once it is written).
const MAX_TOKENS: u64 = 1_000;

/// The pause between two streamed tokens.
const TOKEN_PAUSE: Duration = Duration::from_millis(5);

/// What the model "says", word after word.
const WORDS: &[&str] = &[
    "once", "upon", "a", "time", "a", "rate", "limiter", "counted", "tokens", "and", "every",
    "one", "was", "paid", "for",
];

/// The app: `POST /v1/completions` behind the limiter.
fn app(limiter: Limiter) -> Router {
    Router::new()
        .route("/v1/completions", post(complete))
        .layer(RateLimitLayer::new(limiter).for_axum())
}

/// `{"prompt": "...", "max_tokens": N, "stream": true}`: one token per
/// word of the prompt, charged with the head; `max_tokens` tokens
/// streamed (or written at once with `"stream": false`), each charged as
/// it is produced.
async fn complete(req: Request) -> Response {
    let charge = req.extensions().get::<Charge>().cloned();
    let Ok(bytes) = axum::body::to_bytes(req.into_body(), 64 * 1024).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "prompt too long\n").into_response();
    };
    let Ok(ask) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return (
            StatusCode::BAD_REQUEST,
            "send JSON: {\"prompt\": \"...\"}\n",
        )
            .into_response();
    };
    let prompt_tokens = ask["prompt"]
        .as_str()
        .map_or(0, |p| p.split_whitespace().count());
    let max_tokens = ask["max_tokens"].as_u64().unwrap_or(100).min(MAX_TOKENS);
    let completion = Completion {
        left: max_tokens,
        next: 0,
        charge,
        pause: ask["stream"]
            .as_bool()
            .unwrap_or(true)
            .then(|| Box::pin(tokio::time::sleep(TOKEN_PAUSE))),
    };
    let mut res = Body::new(completion).into_response();
    res.extensions_mut()
        .insert(ResponseCost(prompt_tokens as u64));
    res
}

/// The completion's body: `left` more tokens, each added to the
/// request's [`Charge`] as it is produced, paced by `pause` when
/// streaming.
struct Completion {
    left: u64,
    next: usize,
    charge: Option<Charge>,
    pause: Option<Pin<Box<Sleep>>>,
}

impl HttpBody for Completion {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.left == 0 {
            return Poll::Ready(None);
        }
        if let Some(pause) = &mut self.pause {
            std::task::ready!(pause.as_mut().poll(cx));
            let next = tokio::time::Instant::now() + TOKEN_PAUSE;
            pause.as_mut().reset(next);
        }
        self.left -= 1;
        if let Some(charge) = &self.charge {
            charge.add(1);
        }
        let word = WORDS[self.next % WORDS.len()];
        self.next += 1;
        let sep = if self.left == 0 { "\n" } else { " " };
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(format!("{word}{sep}"))))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let limiter = Limiter::builder(RuleSet::from_json(RULES)?)
        .backend_arc(ratelimit_examples::backend_from_env().await?)
        .build();
    let port = std::env::var("PORT").unwrap_or_else(|_| "3004".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    let addr = listener.local_addr()?;
    let ask = |n: u64| format!("-d '{{\"prompt\": \"tell me a story\", \"max_tokens\": {n}}}'");
    println!("listening on http://{addr}");
    println!("try (key `demo` may spend 1,000 tokens a minute):");
    println!(
        "  curl -N -H 'x-api-key: demo' {} {addr}/v1/completions",
        ask(400)
    );
    println!("      # streams 400 tokens; 403 charged (3 prompt tokens) when it ends");
    println!(
        "  curl -N -H 'x-api-key: demo' {} {addr}/v1/completions",
        ask(700)
    );
    println!("      # admitted (the budget is not spent yet): 1,106 charged, past the limit");
    println!(
        "  curl -si -H 'x-api-key: demo' {} {addr}/v1/completions",
        ask(10)
    );
    println!("      # 429: Retry-After says when the debt is refilled");
    println!(
        "  curl -N -H 'x-api-key: other' {} {addr}/v1/completions",
        ask(10)
    );
    println!("      # another key, another budget");
    println!("  curl -si {} {addr}/v1/completions", ask(10));
    println!("      # 400: no API key");
    let make = app(limiter).into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, make).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use ratelimit_core::ManualClock;
    use ratelimit_tower::ClientIp;
    use tower::ServiceExt;

    /// Asks for `max_tokens` tokens with key `key`; the status, the
    /// Retry-After and the body's word count.
    async fn ask(app: &Router, key: Option<&str>, max_tokens: u64) -> (u16, Option<String>, usize) {
        let body = format!(r#"{{"prompt": "tell me a story", "max_tokens": {max_tokens}}}"#);
        let mut req = http::Request::post("/v1/completions");
        if let Some(key) = key {
            req = req.header("x-api-key", key);
        }
        let mut req = req.body(Body::from(body)).unwrap();
        req.extensions_mut()
            .insert(ClientIp("192.0.2.1".parse().unwrap()));
        let res = app.clone().oneshot(req).await.unwrap();
        let status = res.status().as_u16();
        let retry = res
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let words = std::str::from_utf8(&bytes)
            .unwrap()
            .split_whitespace()
            .count();
        (status, retry, words)
    }

    // The pauses between tokens run on tokio's paused clock; the limiter
    // reads a manual one.
    #[tokio::test(start_paused = true)]
    async fn a_key_is_refused_once_its_completions_spent_the_budget() {
        let clock = ManualClock::new(1_767_225_600_000);
        let limiter = Limiter::builder(RuleSet::from_json(RULES).unwrap())
            .clock(clock.clone())
            .build();
        let app = app(limiter);
        // 403 tokens (3 of the prompt, 400 streamed), then 703: 1,106.
        assert_eq!(ask(&app, Some("demo"), 400).await, (200, None, 400));
        assert_eq!(ask(&app, Some("demo"), 700).await.0, 200);
        // 106 tokens of debt, then 1 to fit: 107 at 1,000 a minute.
        let (status, retry, _) = ask(&app, Some("demo"), 10).await;
        assert_eq!((status, retry.as_deref()), (429, Some("7")));
        assert_eq!(ask(&app, Some("other"), 10).await.0, 200);
        assert_eq!(ask(&app, None, 10).await.0, 400);
        clock.advance(Duration::from_secs(7));
        assert_eq!(ask(&app, Some("demo"), 10).await.0, 200);
    }
}
