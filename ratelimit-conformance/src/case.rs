//! The timeline case format of the crate docs and `cases/`. Every struct
//! refuses unknown fields: a case with a field the runner does not know
//! fails, never passes silently.

use serde::Deserialize;
use serde_json::Value;

/// Seconds from this origin (2026-01-01T00:00:00Z) in milliseconds.
pub const ORIGIN_MS: u64 = 1_767_225_600_000;

/// The most instances a case may run.
pub const MAX_INSTANCES: u32 = 8;

/// One case file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// A short sentence.
    pub name: String,
    /// Seed file and section, or "derived".
    #[serde(default)]
    pub source: Option<String>,
    /// Where the case applies (default both).
    #[serde(default)]
    pub backends: Option<Vec<String>>,
    /// How many instances the limiter believes are running.
    #[serde(default)]
    pub fleet_size: Option<u64>,
    /// How many instances share the backend (default 1, at most
    /// [`MAX_INSTANCES`]): each has its own limiter, caches and counters.
    #[serde(default)]
    pub instances: Option<u32>,
    /// Rule objects, as the library's JSON rule format.
    pub rules: Value,
    /// The timeline.
    #[serde(default)]
    pub steps: Option<Vec<Step>>,
    /// Loading the rules must fail, naming the offending rule.
    #[serde(default)]
    pub expect_invalid: Option<bool>,
}

impl Case {
    /// How many instances the case runs.
    ///
    /// # Errors
    ///
    /// 0 or more than [`MAX_INSTANCES`].
    pub fn instance_count(&self) -> Result<usize, String> {
        match self.instances.unwrap_or(1) {
            n @ 1..=MAX_INSTANCES => Ok(n as usize),
            n => Err(format!("instances must be 1 to {MAX_INSTANCES}, not {n}")),
        }
    }

    /// Whether the case applies to `backend` (`memory` or `valkey`).
    pub fn applies_to(&self, backend: &str) -> bool {
        self.backends
            .as_ref()
            .is_none_or(|b| b.iter().any(|x| x == backend))
    }
}

/// One step: requests, or a change to Valkey.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Seconds from the origin.
    pub at: f64,
    /// Send the request this many times.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Seconds between repeats.
    #[serde(default)]
    pub every: Option<f64>,
    /// The request.
    #[serde(default)]
    pub request: Option<Request>,
    /// What each answer must be.
    #[serde(default)]
    pub expect: Option<Expect>,
    /// `"down"` or `"up"`.
    #[serde(default)]
    pub valkey: Option<String>,
    /// A rule set published to every instance, as the fleet's control
    /// publishes it (the counts of unchanged rules are kept).
    #[serde(default)]
    pub publish: Option<Value>,
    /// The instance that receives the step's requests (default 0).
    #[serde(default)]
    pub instance: Option<u32>,
}

/// A request of a step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Client IP, v4 or v6.
    pub ip: String,
    /// Method (default GET).
    #[serde(default)]
    pub method: Option<String>,
    /// Host (default example.com).
    #[serde(default)]
    pub host: Option<String>,
    /// Path (default /).
    #[serde(default)]
    pub path: Option<String>,
    /// Raw query.
    #[serde(default)]
    pub query: Option<String>,
    /// Headers in order, repeats allowed.
    #[serde(default)]
    pub headers: Option<Vec<(String, String)>>,
    /// Claims of a verified token.
    #[serde(default)]
    pub jwt_claims: Option<serde_json::Map<String, Value>>,
    /// Viewer country.
    #[serde(default)]
    pub country: Option<String>,
    /// Viewer ASN.
    #[serde(default)]
    pub asnum: Option<String>,
    /// Viewer JA4.
    #[serde(default)]
    pub ja4: Option<String>,
    /// Viewer locale.
    #[serde(default)]
    pub locale: Option<String>,
    /// What the upstream answers if reached (default 200).
    #[serde(default)]
    pub upstream_status: Option<u16>,
    /// What the response costs if the request is forwarded (default 0):
    /// charged to the `charge: response` rules right after it, before the
    /// next step.
    #[serde(default)]
    pub response_cost: Option<u64>,
}

/// What an answer must be.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// A status, or a list meaning any of them.
    pub status: StatusSet,
    /// Retry-After in whole seconds.
    #[serde(default)]
    pub retry_after: Option<u64>,
    /// Exact values of named response headers.
    #[serde(default)]
    pub headers: Option<serde_json::Map<String, Value>>,
    /// Ids of log rules that counted the request as over their limit.
    #[serde(default)]
    pub would_limit: Option<Vec<String>>,
}

/// One status or several.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum StatusSet {
    /// Exactly this.
    One(u16),
    /// Any of these.
    Any(Vec<u16>),
}

impl StatusSet {
    /// Whether `s` is expected.
    pub fn contains(&self, s: u16) -> bool {
        match self {
            StatusSet::One(x) => *x == s,
            StatusSet::Any(v) => v.contains(&s),
        }
    }
}
