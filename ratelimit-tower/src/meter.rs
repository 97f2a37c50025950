//! [`Meter`]: charges a response's cost once, when its body ends.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use http::HeaderMap;
use ratelimit_core::limiter::ChargeFuture;
use ratelimit_core::limiter::ResponseTicket;
use ratelimit_core::Limiter;

use crate::Charge;

/// What a response whose request matched `charge: response` rules owes,
/// charged exactly once: when its body ends, or when it is dropped.
pub(crate) struct Meter {
    limiter: Limiter,
    ticket: ResponseTicket,
    /// The [`ResponseCost`](crate::ResponseCost) of the response head.
    head_cost: u64,
    /// What the service added while producing the body.
    charge: Option<Charge>,
    /// Await the charge before the body reports its end.
    before_end: bool,
    state: State,
    /// The body's trailers, held back while the charge is awaited.
    pub(crate) trailers: Option<HeaderMap>,
}

enum State {
    Armed,
    // In a mutex only to keep the body `Sync`: it is reached through
    // `get_mut`, never locked.
    Charging(Mutex<ChargeFuture>),
    Done,
}

impl Meter {
    pub(crate) fn new(
        limiter: Limiter,
        ticket: ResponseTicket,
        head_cost: u64,
        charge: Option<Charge>,
        before_end: bool,
    ) -> Self {
        Self {
            limiter,
            ticket,
            head_cost,
            charge,
            before_end,
            state: State::Armed,
            trailers: None,
        }
    }

    /// Whether the charge has not started yet.
    pub(crate) fn is_armed(&self) -> bool {
        matches!(self.state, State::Armed)
    }

    /// Whether the charge is to be awaited before the body ends.
    pub(crate) fn before_end(&self) -> bool {
        self.before_end
    }

    /// Whether the body has nothing more to give: charged and no trailers
    /// held back.
    pub(crate) fn is_done(&self) -> bool {
        matches!(self.state, State::Done) && self.trailers.is_none()
    }

    /// Charges the total now: decided in the call on a backend without
    /// I/O; otherwise kept to be awaited (`wait` and the layer's
    /// `charge_before_end`) or spawned. Does nothing the second time.
    pub(crate) fn start(&mut self, wait: bool) {
        if !self.is_armed() {
            return;
        }
        self.state = State::Done;
        let cost = self
            .head_cost
            .saturating_add(self.charge.as_ref().map_or(0, Charge::get));
        if cost == 0 {
            return;
        }
        let future = self.limiter.charge(&self.ticket, cost);
        if future.is_ready() {
            return;
        }
        if wait && self.before_end {
            self.state = State::Charging(Mutex::new(future));
        } else {
            spawn(future);
        }
    }

    /// Ready once the charge is done (at once unless it is awaited).
    pub(crate) fn poll_charged(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let State::Charging(future) = &mut self.state {
            let future = future.get_mut().unwrap_or_else(|e| e.into_inner());
            std::task::ready!(Pin::new(future).poll(cx));
            self.state = State::Done;
        }
        Poll::Ready(())
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        // The body ended early (dropped by a client that hung up, or by a
        // server that stopped polling at its known length): charge what
        // was produced, and finish a charge that was being awaited.
        self.start(false);
        if let State::Charging(future) = std::mem::replace(&mut self.state, State::Done) {
            spawn(future.into_inner().unwrap_or_else(|e| e.into_inner()));
        }
    }
}

/// Runs a charge that waits on the backend off the response's path.
fn spawn(future: ChargeFuture) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(future);
        }
        Err(_) => tracing::warn!("a response's charge was dropped: no tokio runtime to run it on"),
    }
}

impl fmt::Debug for Meter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Armed => "armed",
            State::Charging(_) => "charging",
            State::Done => "done",
        };
        f.debug_struct("Meter")
            .field("head_cost", &self.head_cost)
            .field("charge", &self.charge)
            .field("before_end", &self.before_end)
            .field("state", &state)
            .finish_non_exhaustive()
    }
}
