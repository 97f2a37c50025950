//! What the layer does with an answer: the inner service's (headers,
//! counted statuses, the response's charge) or its own (429, 503, 400;
//! 500, 414, 431 before any rule runs).

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use ratelimit_core::limiter::{HeaderItem, ResponseTicket};
use ratelimit_core::{Limiter, Outcome, Verdict};

use crate::meter::Meter;
use crate::missing_peer::missing_peer_answer;
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
            headers,
            would_limit,
            ticket,
            charge,
        }
    }

    /// The response future was dropped while the inner service worked (a
    /// client that hung up, whose request hyper cancels): charges what the
    /// service added to its [`Charge`] so far, as a body dropped before its
    /// end does. Nothing when no `charge: response` rule matched, or when
    /// the response was already built ([`forwarded`] took the charge).
    pub(crate) fn cancelled(&mut self, limiter: &Limiter) {
        if let Some(charge) = self.charge.take() {
            let ticket = std::mem::take(&mut self.ticket);
            Meter::new(limiter.clone(), ticket, 0, Some(charge), false).start(false);
        }
    }

    /// Nothing to add, count or charge (`charge` is set exactly when the
    /// ticket charges).
    #[inline(always)]
    pub(crate) fn is_nothing(&self) -> bool {
        self.headers.is_empty()
            && self.would_limit.is_empty()
            && self.ticket.is_empty()
            && self.charge.is_none()
    }
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
#[inline]
pub(crate) fn charge_for<ReqB>(verdict: &Verdict, request: &mut Request<ReqB>) -> Option<Charge> {
    verdict.ticket.charges().then(|| {
        let outer = request.extensions().get::<Charge>().cloned();
        outer.unwrap_or_else(|| {
            let c = Charge::default();
            request.extensions_mut().insert(c.clone());
            c
        })
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
    let ticket = std::mem::take(&mut after.ticket);
    shared
        .limiter
        .record_response(&ticket, res.status().as_u16());
    let mut res = if ticket.charges() {
        let head_cost = res.extensions().get::<ResponseCost>().map_or(0, |c| c.0);
        let before_end = shared.charge_before_end;
        let charge = after.charge.take();
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
    headers::apply_items(&after.headers, Outcome::Forward, map, legacy, now);
    if !after.would_limit.is_empty() {
        let ids = std::mem::take(&mut after.would_limit);
        res.extensions_mut().insert(WouldLimit(ids));
    }
    shared.counters.response(res.status());
    res
}

/// The limiter's own answer (never counted by count rules).
pub(crate) fn refused<B, M: MakeResponse>(
    shared: &Shared<M>,
    mut verdict: Verdict,
) -> Response<ResponseBody<B>> {
    let mut res = own_answer(shared.make_response.make_response(&verdict));
    let now = if shared.legacy_headers {
        shared.limiter.now_ms()
    } else {
        0
    };
    headers::apply(&verdict, res.headers_mut(), shared.legacy_headers, now);
    if !verdict.would_limit.is_empty() {
        let ids = std::mem::take(&mut verdict.would_limit);
        res.extensions_mut().insert(WouldLimit(ids));
    }
    shared.counters.response(res.status());
    res
}

/// The layer's answer without asking the limiter.
pub(crate) fn answered<B, M>(shared: &Shared<M>, own: Own) -> Response<ResponseBody<B>> {
    let res = match own {
        Own::MissingPeer => missing_peer_answer(),
        Own::TooLarge(e) => too_large_answer(e.status()),
    };
    shared.counters.response(res.status());
    own_answer(res)
}

/// The body of a 414 or 431: small JSON, like the limiter's own answers.
fn too_large_answer(status: StatusCode) -> Response<Bytes> {
    let mut res = Response::new(Bytes::from_static(br#"{"error":"too_large"}"#));
    *res.status_mut() = status;
    res.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    res
}

/// Turns the limiter's own answer into a response.
fn own_answer<B>(res: Response<Bytes>) -> Response<ResponseBody<B>> {
    res.map(ResponseBody::full)
}
