//! What the layer does with an answer: the inner service's (headers,
//! counted statuses, the response's charge) or its own (429, 503, 400;
//! 500, 414, 431 before any rule runs), as gRPC to a gRPC call.

use std::mem::ManuallyDrop;

use http::{Request, Response};
use ratelimit_core::limiter::{HeaderItem, ResponseTicket};
use ratelimit_core::{Limiter, Outcome, Verdict};

use crate::grpc::{counted_status, to_grpc};
use crate::meter::Meter;
use crate::missing_peer::log_missing_peer;
use crate::shared::Shared;
use crate::{headers, Charge, MakeResponse, ResponseBody, ResponseCost, TooLarge, WouldLimit};

/// What a forwarded request's verdict still asks of its response: for most
/// requests nothing (no header items, no log rule over its limit, no count
/// or charge rule), and the response then only passes through. The parts of
/// the verdict the response needs, not all of it: the response future
/// holds this while the inner service works, and every move of the future
/// copies it.
#[derive(Debug)]
pub(crate) struct After {
    /// Dropped by [`After`]'s own drop, and only when there is something
    /// to drop: the usual empty parts cost one test in line rather than
    /// the drop glue's call and its check of each part.
    parts: ManuallyDrop<Parts>,
}

/// What [`After`] holds.
#[derive(Debug, Default)]
struct Parts {
    headers: Vec<HeaderItem>,
    would_limit: Vec<String>,
    ticket: ResponseTicket,
    /// Shared with the request's extensions when `charge: response` rules
    /// matched (see [`charge_for`]).
    charge: Option<Charge>,
}

impl After {
    /// What `verdict` (forwarding) asks of the response; `charge` is what
    /// [`charge_for`] gave the request.
    #[inline(always)]
    pub(crate) fn new(verdict: Verdict, charge: Option<Charge>) -> Self {
        let Verdict {
            headers,
            would_limit,
            ticket,
            ..
        } = verdict;
        Self {
            parts: ManuallyDrop::new(Parts {
                headers,
                would_limit,
                ticket,
                charge,
            }),
        }
    }

    /// The response future was dropped while the inner service worked (a
    /// client that hung up, whose request hyper cancels): charges what the
    /// service added to its [`Charge`] so far, as a body dropped before its
    /// end does. Nothing when no `charge: response` rule matched, or when
    /// the response was already built ([`forwarded`] took the charge).
    pub(crate) fn cancelled(&mut self, limiter: &Limiter) {
        if let Some(charge) = self.parts.charge.take() {
            let ticket = std::mem::take(&mut self.parts.ticket);
            Meter::new(limiter.clone(), ticket, 0, Some(charge), false).start(false);
        }
    }

    /// Nothing to add, count or charge (`charge` is set exactly when the
    /// ticket charges).
    #[inline(always)]
    pub(crate) fn is_nothing(&self) -> bool {
        let p = &self.parts;
        p.headers.is_empty()
            && p.would_limit.is_empty()
            && p.ticket.is_empty()
            && p.charge.is_none()
    }

    /// Nothing to free but, perhaps, the ticket's items: no list with
    /// room, no charge.
    #[inline(always)]
    fn holds_nothing(&self) -> bool {
        let p = &self.parts;
        p.headers.capacity() == 0 && p.would_limit.capacity() == 0 && p.charge.is_none()
    }
}

impl Drop for After {
    #[inline(always)]
    fn drop(&mut self) {
        if self.holds_nothing() {
            // The ticket frees its own items, whatever its lists say (its
            // drop is a test in line when it has none).
            drop(std::mem::take(&mut self.parts.ticket));
        } else {
            drop_parts(&mut self.parts);
        }
    }
}

/// Drops what an [`After`] holds, leaving empty parts that own nothing.
#[inline(never)]
fn drop_parts(parts: &mut ManuallyDrop<Parts>) {
    drop(ManuallyDrop::into_inner(std::mem::take(parts)));
}

/// The layer's own answer, decided before asking the limiter: built when
/// the future is first polled, so that the future stays small.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Own {
    /// No client address: 500.
    MissingPeer,
    /// A part too long for the rules to read whole: 414 or 431.
    TooLarge(TooLarge),
}

/// The [`Charge`] a forwarded request gives the inner service when
/// `charge: response` rules matched (and only then: no allocation on the
/// common path). A request that already carries one (from a rate limit
/// layer further out) keeps it: both layers charge the one total.
#[inline(always)]
pub(crate) fn charge_for<ReqB>(verdict: &Verdict, request: &mut Request<ReqB>) -> Option<Charge> {
    verdict.ticket.charges().then(|| shared_charge(request))
}

/// The request's [`Charge`]: the one it carries, else a new one put in its
/// extensions.
#[inline(never)]
fn shared_charge<ReqB>(request: &mut Request<ReqB>) -> Charge {
    let outer = request.extensions().get::<Charge>().cloned();
    outer.unwrap_or_else(|| {
        let c = Charge::default();
        request.extensions_mut().insert(c.clone());
        c
    })
}

/// The inner service's answer to a request whose verdict asks nothing of
/// it ([`After::is_nothing`]): counted in the metrics, passed through.
#[inline(always)]
pub(crate) fn passed<B, M>(shared: &Shared<M>, res: Response<B>) -> Response<ResponseBody<B>> {
    shared.counters.response(res.status());
    res.map(ResponseBody::inner)
}

/// The inner service's answer to a request whose verdict asks something of
/// it: counted by count rules, given the headers, and metered when
/// `charge: response` rules matched. What is needed is taken out of
/// `after`.
pub(crate) fn forwarded<B, M>(
    shared: &Shared<M>,
    after: &mut After,
    res: Response<B>,
) -> Response<ResponseBody<B>> {
    let ticket = std::mem::take(&mut after.parts.ticket);
    shared
        .limiter
        .record_response(&ticket, counted_status(&res));
    let mut res = if ticket.charges() {
        let head_cost = res.extensions().get::<ResponseCost>().map_or(0, |c| c.0);
        let before_end = shared.charge_before_end;
        let charge = after.parts.charge.take();
        let meter = Meter::new(
            shared.limiter.clone(),
            ticket,
            head_cost,
            charge,
            before_end,
        );
        res.map(|body| ResponseBody::charged(body, meter))
    } else {
        res.map(ResponseBody::inner)
    };
    let legacy = shared.legacy_headers;
    let now = if legacy { shared.limiter.now_ms() } else { 0 };
    let map = res.headers_mut();
    headers::apply_items(&after.parts.headers, Outcome::Forward, map, legacy, now);
    if !after.parts.would_limit.is_empty() {
        let ids = std::mem::take(&mut after.parts.would_limit);
        res.extensions_mut().insert(WouldLimit(ids));
    }
    shared.counters.response(res.status());
    res
}

/// The limiter's own answer (never counted by count rules); a gRPC call
/// (`grpc`) gets it as gRPC.
pub(crate) fn refused<B, M: MakeResponse>(
    shared: &Shared<M>,
    verdict: &mut Verdict,
    grpc: bool,
) -> Response<ResponseBody<B>> {
    let mut res = shared.make_response.make_response(verdict);
    let now = if shared.legacy_headers {
        shared.limiter.now_ms()
    } else {
        0
    };
    headers::apply(verdict, res.headers_mut(), shared.legacy_headers, now);
    if !verdict.would_limit.is_empty() {
        let ids = std::mem::take(&mut verdict.would_limit);
        res.extensions_mut().insert(WouldLimit(ids));
    }
    // Counted as the HTTP answer it maps from.
    shared.counters.response(res.status());
    if grpc {
        let pushback = match verdict.outcome {
            Outcome::Limited => Some(verdict.retry_after_ms.max(1)),
            Outcome::Unavailable => Some(1000),
            _ => None,
        };
        res = to_grpc(res, pushback, shared.grpc_limited);
    }
    res.map(ResponseBody::full)
}

/// The layer's answer without asking the limiter; a gRPC call (`grpc`)
/// gets it as gRPC.
pub(crate) fn answered<B, M: MakeResponse>(
    shared: &Shared<M>,
    own: Own,
    grpc: bool,
) -> Response<ResponseBody<B>> {
    let mut res = match own {
        Own::MissingPeer => {
            log_missing_peer(&shared.missing_peer_logged);
            shared.make_response.missing_peer()
        }
        Own::TooLarge(e) => shared.make_response.too_large(e),
    };
    shared.counters.response(res.status());
    if grpc {
        res = to_grpc(res, None, shared.grpc_limited);
    }
    res.map(ResponseBody::full)
}

#[cfg(test)]
mod tests;
