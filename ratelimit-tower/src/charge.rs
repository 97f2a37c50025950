//! Charging what a response cost: [`ResponseCost`] and [`Charge`].
//!
//! Rules with `"charge": "response"` meter what the inner service reports
//! once it has answered (tokens of a completion, rows of a search, bytes),
//! not the requests themselves. At request time such a rule only asks
//! whether the budget is spent (the request is refused once the charged
//! total is over the limit); the layer then charges the response's cost to
//! every matching rule when the response body ends:
//!
//! - [`ResponseCost`], a response extension, for a cost known with the
//!   head;
//! - [`Charge`], a handle the layer puts in the request's extensions (only
//!   when a `charge: response` rule matched), for a cost known as the body
//!   is produced: the service, or its body stream, [adds](Charge::add) as
//!   it goes.
//!
//! The layer charges `ResponseCost + Charge total` exactly once, when the
//! body ends: at its end of stream, at its trailers, or when it is dropped
//! early (a client hanging up mid-stream pays for what was produced). A
//! request cancelled before its response (its future dropped while the
//! service works: hyper does so when the client hangs up) is charged its
//! [`Charge`] total at that moment. A total of 0 charges nothing. The
//! charge goes through
//! [`Limiter::charge`](ratelimit_core::Limiter::charge): at once on the
//! in-memory backend, in a spawned task on one that waits on the network
//! (off the response's critical path), unless
//! [`RateLimitLayer::charge_before_end`](crate::RateLimitLayer::charge_before_end)
//! asks the body to wait for it. The limiter's own answers (429, 503, 400)
//! are never charged; nor is a request whose inner service fails before
//! its response head.
//!
//! Requests are admitted while the budget is not spent yet, so the charged
//! total can pass the limit by at most the costs of the requests in flight.
//!
//! # Examples
//!
//! ```
//! use std::convert::Infallible;
//! use http::{Request, Response};
//! use ratelimit_tower::{Charge, ClientIp, RateLimitLayer, ResponseCost};
//! use tower::{Layer, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let layer = RateLimitLayer::from_json_str(r#"[{"id": "tokens",
//!     "expression": "true", "algorithm": "fixed_window", "limit": 1000,
//!     "period": "1m", "key": ["ip"], "charge": "response"}]"#)?;
//! let svc = layer.layer(tower::service_fn(|req: Request<String>| async move {
//!     // Streamed work adds as it goes...
//!     if let Some(charge) = req.extensions().get::<Charge>() {
//!         charge.add(300);
//!     }
//!     // ...and a cost known with the head rides on the response.
//!     let mut res = Response::new(String::from("a completion"));
//!     res.extensions_mut().insert(ResponseCost(200));
//!     Ok::<_, Infallible>(res)
//! }));
//!
//! let mut req = Request::new(String::new());
//! req.extensions_mut().insert(ClientIp("203.0.113.7".parse()?));
//! let res = svc.oneshot(req).await?;
//! // Charged 500 when the body ends (here: dropped).
//! drop(res);
//! # Ok(())
//! # }
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A response extension: what the response cost under the `charge:
/// response` rules that matched its request (tokens, rows, bytes), when the
/// inner service knows it with the head. Added to the [`Charge`] total and
/// charged when the body ends; ignored when no such rule matched.
///
/// ```
/// use ratelimit_tower::ResponseCost;
///
/// let mut res = http::Response::new(());
/// res.extensions_mut().insert(ResponseCost(1_200));
/// ```
///
/// Exhaustive on purpose: a newtype over its one value, which callers
/// build and take apart as `ResponseCost(value)`; it has nothing to grow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResponseCost(pub u64);

/// A request extension the layer inserts only when a `charge: response`
/// rule matched the request: the inner service (or the stream that
/// produces its body) [adds](Charge::add) what the response costs as it
/// produces it. Clones share the total.
///
/// The layer reads the total once, when the response body ends (or is
/// dropped, or the request is cancelled before its response); what is
/// added after that is not charged. A request that
/// already carries one (a rate limit layer further out put it there)
/// keeps it: every layer charges its own rules the same total.
///
/// ```
/// use ratelimit_tower::Charge;
///
/// let charge = Charge::default();
/// let in_the_stream = charge.clone();
/// in_the_stream.add(40);
/// in_the_stream.add(2);
/// assert_eq!(charge.get(), 42);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Charge(Arc<AtomicU64>);

impl Charge {
    /// Adds `n` to the total (saturating at `u64::MAX`).
    pub fn add(&self, n: u64) {
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                Some(t.saturating_add(n))
            });
    }

    /// The total added so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// How many handles share this total (the tests' look at a drop).
    #[cfg(test)]
    pub(crate) fn holders(&self) -> usize {
        Arc::strong_count(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_saturates_instead_of_wrapping() {
        let c = Charge::default();
        c.add(u64::MAX - 1);
        c.add(5);
        assert_eq!(c.get(), u64::MAX);
    }
}
