//! What the runner plays a case against: a limiter (on any backend) and an
//! injected clock, as core would see requests, or the tower layer.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::IpAddr;

use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, Outcome, RequestAttrs};

use crate::case::Request;

/// What the client saw.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// The status.
    pub status: u16,
    /// Response headers (name, value).
    pub headers: Vec<(String, String)>,
    /// Log rules that counted the request as over their limit.
    pub would_limit: Vec<String>,
}

impl Reply {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Something a case can be played against.
pub trait Harness {
    /// Sends one request at `at_ms` (Unix ms); the upstream answers
    /// `upstream_status` if the request reaches it, and reports that its
    /// response cost `response_cost`, charged to the `charge: response`
    /// rules before this returns.
    fn request(
        &mut self,
        at_ms: u64,
        req: RequestAttrs,
        upstream_status: u16,
        response_cost: u64,
    ) -> impl Future<Output = Reply>;

    /// Makes the shared backend unreachable (`false`) or brings it back.
    fn set_backend_up(&mut self, up: bool) -> Result<(), String>;

    /// Publishes `rules` to every instance, as the fleet's control does.
    fn publish(&mut self, rules: RuleSet) -> Result<(), String>;

    /// Sends the next requests to instance `i` (from 0).
    fn use_instance(&mut self, i: usize) -> Result<(), String>;
}

/// Takes the backend down (`up` false) or back up through `toggle`, or
/// says that this backend cannot be taken down.
pub(crate) fn set_up(toggle: &mut Option<Toggle>, up: bool) -> Result<(), String> {
    match toggle {
        Some(t) => t(up),
        None => Err("this backend cannot be taken down".into()),
    }
}

/// Publishes `rules` on every one of `instances`.
pub(crate) fn publish_all(instances: &[Limiter], rules: &RuleSet) -> Result<(), String> {
    for l in instances {
        l.publish(rules.clone());
    }
    Ok(())
}

/// The instance `i` of `all`, or an error naming how many there are.
pub(crate) fn pick<T: Clone>(all: &[T], i: usize) -> Result<T, String> {
    all.get(i).cloned().ok_or_else(|| {
        format!(
            "instance {i} does not exist: the case runs {} (set \"instances\")",
            all.len()
        )
    })
}

/// Turns a case request into request attributes.
pub fn attrs(r: &Request) -> Result<RequestAttrs, String> {
    let ip: IpAddr = r.ip.parse().map_err(|_| format!("bad ip {:?}", r.ip))?;
    let mut a = RequestAttrs::new(ip);
    if let Some(m) = &r.method {
        a.method = m.clone();
    }
    if let Some(h) = &r.host {
        a.host = h.clone();
    }
    if let Some(p) = &r.path {
        a.path = p.clone();
    }
    if let Some(q) = &r.query {
        a.query = q.clone();
    }
    for (n, v) in r.headers.iter().flatten() {
        a = a.with_header(n, v);
    }
    if let Some(claims) = &r.jwt_claims {
        let map: BTreeMap<String, String> = claims
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), s)
            })
            .collect();
        a.jwt_claims = Some(map);
    }
    a.country = r.country.clone();
    a.asnum = r.asnum.clone();
    a.ja4 = r.ja4.clone();
    a.locale = r.locale.clone();
    Ok(a)
}

/// Takes the shared backend down (`false`) or up.
pub type Toggle = Box<dyn FnMut(bool) -> Result<(), String> + Send>;

/// Plays requests through [`Limiter::check`] directly.
pub struct LimiterHarness {
    /// The limiter of the instance receiving requests.
    pub limiter: Limiter,
    /// Every instance's limiter (the first is `limiter` at the start).
    pub instances: Vec<Limiter>,
    /// Its clock.
    pub clock: ManualClock,
    /// Takes the backend down or up, when it can.
    pub toggle: Option<Toggle>,
}

impl std::fmt::Debug for LimiterHarness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LimiterHarness").finish_non_exhaustive()
    }
}

impl Harness for LimiterHarness {
    async fn request(
        &mut self,
        at_ms: u64,
        req: RequestAttrs,
        upstream_status: u16,
        response_cost: u64,
    ) -> Reply {
        self.clock.set_ms(at_ms);
        let v = self.limiter.check(&req).await;
        let mut reply = Reply {
            would_limit: v.would_limit.clone(),
            ..Reply::default()
        };
        reply.status = match v.outcome {
            Outcome::Forward => {
                self.limiter.record_response(&v.ticket, upstream_status);
                self.limiter.charge(&v.ticket, response_cost).await;
                upstream_status
            }
            Outcome::Limited => 429,
            Outcome::Unavailable => 503,
            _ => 400,
        };
        if let Some(s) = v.retry_after_secs() {
            reply.headers.push(("Retry-After".into(), s.to_string()));
        }
        if let Some(p) = v.ratelimit_policy() {
            reply.headers.push(("RateLimit-Policy".into(), p));
        }
        if let Some(r) = v.ratelimit() {
            reply.headers.push(("RateLimit".into(), r));
        }
        reply
    }

    fn set_backend_up(&mut self, up: bool) -> Result<(), String> {
        set_up(&mut self.toggle, up)
    }

    fn publish(&mut self, rules: RuleSet) -> Result<(), String> {
        publish_all(&self.instances, &rules)
    }

    fn use_instance(&mut self, i: usize) -> Result<(), String> {
        self.limiter = pick(&self.instances, i)?;
        Ok(())
    }
}
