//! The gates: each turns one line of the production checklist (or of the
//! rule engine's own rules) into findings over the loaded rules.

use std::sync::Arc;

use ratelimit_core::algorithm::Algorithm;
use ratelimit_core::rules::{FailMode, KeyPart, Rule};

use super::finding::{Finding, Gate, Level};
use super::probes;

/// Every gate, in the order the audit reports them.
pub(crate) static GATES: [Gate; 8] = [
    Gate {
        code: "RL001",
        name: "fixed window on a customer-facing route",
        source: "\"Fixed window ... Cheap, simple, has the boundary-burst bug. Acceptable for \
                 'no more than N writes per minute to a low-stakes internal endpoint' but not \
                 for anything customer-facing.\"",
        guide: "docs/production.md#fixed-windows-and-the-boundary-burst",
    },
    Gate {
        code: "RL002",
        name: "login not limited by (ip, username), (ip) and (username)",
        source:
            "\"Login rate-limited by (IP, username), (IP), and (username) tuples simultaneously.\"",
        guide: "docs/production.md#login-tuples",
    },
    Gate {
        code: "RL003",
        name: "ip-only key on a route whose requests carry credentials",
        source: "\"key -> authenticated user ID > IP+UA > IP > global\"; \"Better yet, key on \
                 the authenticated user where possible.\"",
        guide: "docs/production.md#keys-on-authenticated-routes",
    },
    Gate {
        code: "RL004",
        name: "fail_mode open on an auth route",
        source: "\"Fail-open (allow everything) - preserves availability but lets abuse through.\"",
        guide: "docs/production.md#fail-modes-on-auth-routes",
    },
    Gate {
        code: "RL005",
        name: "one limit shared by auth and read routes",
        source:
            "\"Same limit on auth and read endpoints ... Fix: Differentiate by endpoint cost / \
                 risk: auth ~5-10/min per IP+username; reads ~1000/min per user\"",
        guide: "docs/production.md#auth-and-read-routes-apart",
    },
    Gate {
        code: "RL006",
        name: "expires_at has passed",
        source: "rule engine: \"A save or check of the draft warns about a rule of yours whose \
                 expires_at has passed: the rule will not run.\"",
        guide: "docs/rules.md#rules-that-expire-expires_at",
    },
    Gate {
        code: "RL007",
        name: "the 5-rule cap is reachable",
        source: "rule engine: \"Up to 5 other matching rules run, blocking rules first, then log \
                 rules.\"",
        guide: "docs/production.md#the-5-rule-cap",
    },
    Gate {
        code: "RL008",
        name: "multi-region stance",
        source: "\"Multi-region with separate Redises: the limiter is per-region. A client \
                 switching regions doubles their limit.\"",
        guide: "docs/production.md#multi-region",
    },
];

fn finding(i: usize, level: Level, rule: Option<&Rule>, problem: String, fix: &str) -> Finding {
    Finding {
        gate: &GATES[i],
        level,
        rule: rule.map(|r| r.id.clone()),
        problem,
        fix: fix.to_owned(),
    }
}

/// Rules that take part in the request-rate limits: not count rules.
fn limits(rules: &[Arc<Rule>]) -> impl Iterator<Item = &Rule> {
    rules.iter().map(|r| &**r).filter(|r| !r.is_count_rule())
}

/// RL001: a fixed-window rule (not a count rule) matching a login or read
/// probe.
pub(crate) fn fixed_window(rules: &[Arc<Rule>]) -> Vec<Finding> {
    let all = probes::all();
    limits(rules)
        .filter(|r| r.algorithm == Algorithm::FixedWindow && probes::matches_any(r, &all))
        .map(|r| {
            let p = format!(
                "fixed_window lets a client through up to 2 x {} across a window edge",
                r.limit
            );
            finding(
                0,
                Level::Warning,
                Some(r),
                p,
                "use sliding_window (or token_bucket for bursts)",
            )
        })
        .collect()
}

/// Which of the three login tuples a key gives.
fn tuple(key: &[KeyPart]) -> Option<usize> {
    let ip = key.contains(&KeyPart::Ip);
    let user = key
        .iter()
        .any(|p| !matches!(p, KeyPart::Ip | KeyPart::Constant));
    match (ip, user) {
        (true, true) => Some(0),
        (true, false) => Some(1),
        (false, true) => Some(2),
        (false, false) => None,
    }
}

/// The auth rules: blocking, and matching a login probe but no read probe.
fn login_rules(rules: &[Arc<Rule>]) -> Vec<&Rule> {
    let (login, read) = (probes::login(), probes::read());
    limits(rules)
        .filter(|r| r.is_blocking() && probes::matches_any(r, &login))
        .filter(|r| !probes::matches_any(r, &read))
        .collect()
}

/// RL002: the login rules, together, key on (ip, username), (ip) and
/// (username).
pub(crate) fn login_tuples(rules: &[Arc<Rule>]) -> Vec<Finding> {
    let login = login_rules(rules);
    let Some(first) = login.first() else {
        let p = "no blocking rule of its own matches a POST to a login path (/login, \
                 /signin, /oauth/token, ...)"
            .to_owned();
        return vec![finding(
            1,
            Level::Info,
            None,
            p,
            "if the service has a login route, limit it by the three tuples",
        )];
    };
    let mut have = [false; 3];
    for r in &login {
        if let Some(t) = tuple(&r.key) {
            have[t] = true;
        }
    }
    let names = ["(ip, username)", "(ip)", "(username)"];
    let missing: Vec<&str> = (0..3).filter(|&t| !have[t]).map(|t| names[t]).collect();
    if missing.is_empty() {
        return Vec::new();
    }
    let ids: Vec<&str> = login.iter().map(|r| r.id.as_str()).collect();
    let p = format!(
        "the login rules {ids:?} do not key on {}",
        missing.join(", ")
    );
    vec![finding(
        1,
        Level::Warning,
        Some(first),
        p,
        "add a rule for each missing tuple, as the guide's worked rule set does",
    )]
}

/// RL003: a rule keyed on the IP alone whose expression reads credentials.
pub(crate) fn ip_only(rules: &[Arc<Rule>]) -> Vec<Finding> {
    limits(rules)
        .filter(|r| !r.is_site_wide() && *r.key == [KeyPart::Ip] && probes::needs_credentials(r))
        .map(|r| {
            let p = "keyed on ip alone although its requests carry credentials: clients behind \
                     one NAT share a counter, one client on many addresses gets many"
                .to_owned();
            finding(
                2,
                Level::Warning,
                Some(r),
                p,
                "key on jwt_claim:sub (the verified user), with ip if need be",
            )
        })
        .collect()
}

/// RL004: a blocking login rule with `fail_mode: open`.
pub(crate) fn fail_open_auth(rules: &[Arc<Rule>]) -> Vec<Finding> {
    login_rules(rules)
        .into_iter()
        .filter(|r| r.fail_mode == FailMode::Open)
        .map(|r| {
            let p = "fail_mode open: while Valkey is down, login attempts are not limited".to_owned();
            finding(3, Level::Warning, Some(r), p, "use fail_mode local (a rough limit per instance) or closed; keep open only as a decision, with the fail-open alert")
        })
        .collect()
}

/// RL005: a non-site-wide rule matching a read probe and a login probe
/// that no auth rule of its own limits.
pub(crate) fn shared_auth_read(rules: &[Arc<Rule>]) -> Vec<Finding> {
    let (login, read) = (probes::login(), probes::read());
    let auth = login_rules(rules);
    let bare: Vec<_> = login
        .into_iter()
        .filter(|p| !auth.iter().any(|r| r.expression.matches(p)))
        .collect();
    limits(rules)
        .filter(|r| !r.is_site_wide())
        .filter(|r| probes::matches_any(r, &bare) && probes::matches_any(r, &read))
        .map(|r| {
            let p = format!(
                "one limit ({} per {} s) for login and read routes",
                r.limit,
                r.period_ms / 1000
            );
            finding(
                4,
                Level::Warning,
                Some(r),
                p,
                "give auth routes their own tight rule and reads their own",
            )
        })
        .collect()
}

/// RL006: rules whose `expires_at` has passed at `now_ms`.
pub(crate) fn expired(rules: &[Arc<Rule>], now_ms: u64) -> Vec<Finding> {
    rules
        .iter()
        .filter(|r| r.expired_at(now_ms))
        .map(|r| {
            let p = "expires_at has passed: the rule no longer runs".to_owned();
            finding(
                5,
                Level::Warning,
                Some(r),
                p,
                "remove the rule, or move expires_at ahead",
            )
        })
        .collect()
}

/// RL007: more than 5 non-site-wide rules; a warning when one probe
/// matches more than 5.
pub(crate) fn cap(rules: &[Arc<Rule>]) -> Vec<Finding> {
    let others: Vec<&Rule> = limits(rules).filter(|r| !r.is_site_wide()).collect();
    if others.len() <= 5 {
        return Vec::new();
    }
    let worst = probes::all()
        .iter()
        .map(|p| {
            let n = others.iter().filter(|r| r.expression.matches(p)).count();
            (n, format!("{} {}", p.method, p.path))
        })
        .max_by_key(|(n, _)| *n);
    let fix = "make expressions exclusive, or merge rules; check requests with ratelimit explain";
    match worst {
        Some((n, req)) if n > 5 => {
            let p = format!("{req} matches {n} rules: only 5 run, blocking rules first");
            vec![finding(6, Level::Warning, None, p, fix)]
        }
        _ => {
            let p = format!(
                "{} rules besides the site-wide ones: a request a client crafts to match more than 5 runs only 5",
                others.len()
            );
            vec![finding(6, Level::Info, None, p, fix)]
        }
    }
}

/// RL008: always, once: limits are per Valkey deployment.
pub(crate) fn multi_region() -> Vec<Finding> {
    let p =
        "limits count per Valkey deployment: a client switching regions gets each region's budget"
            .to_owned();
    vec![finding(
        7,
        Level::Info,
        None,
        p,
        "choose a stance (accept, pin clients to a region, or split the limit) and write it down",
    )]
}
