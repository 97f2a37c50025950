//! The compiled plan against the general path: the same
//! random rule sets and requests through a limiter that uses its plans and
//! one that never does (`LimiterBuilder::general_only`), each on its own
//! `ManualClock` and in-memory store; every verdict, every rule's stats and
//! every stored state must be the same.

use std::net::IpAddr;

use proptest::prelude::*;

use crate::algorithm::Decision;
use crate::backend::{Backend, BackendError, Batch, BoxFuture, Check};
use crate::rules::RuleSet;
use crate::stats::EVENTS;
use crate::store::MemoryBackend;
use crate::test_runtime::block_on;
use crate::{HashKey, Limiter, ManualClock, RequestAttrs};

const T0: u64 = 1_767_225_600_000;

const IPS: [&str; 5] = [
    "203.0.113.7",
    "203.0.113.8",
    "10.1.2.3",
    "2001:db8::1",
    "::ffff:203.0.113.7",
];

/// The per-IP rule `ip`: a random algorithm, numbers and options, in one of
/// four shapes: plain (the compiled plan's), or charged after the response,
/// with an allow list, or a canary (each of which takes it off the plan).
fn ip_rule() -> impl Strategy<Value = String> {
    let numbers = (
        0..4usize,
        2..5u64,
        prop::sample::select(vec!["1s", "2s", "1m"]),
    );
    let options = (any::<bool>(), prop::option::of(Just("3s")), any::<bool>());
    let more = (
        prop::sample::select(vec!["open", "closed", "local"]),
        prop::option::of(2..3u64),
    );
    (numbers, options, more, 0..6usize).prop_map(
        |((alg, limit, period), (log, penalty, headers), (fail, cost), shape)| {
            let algorithm = [
                "fixed_window",
                "sliding_window",
                "token_bucket",
                "leaky_bucket",
            ][alg];
            let mut extra = String::new();
            if alg >= 2 {
                extra += &format!(r#", "burst": {}"#, limit + 1);
            }
            // A canary is for blocking rules only.
            if log && shape != 5 {
                extra += r#", "action": "log""#;
            }
            if let Some(p) = penalty {
                extra += &format!(r#", "penalty": "{p}""#);
            }
            if let (Some(c), false) = (cost, shape == 3) {
                extra += &format!(r#", "cost": {c}"#);
            }
            extra += match shape {
                3 => r#", "charge": "response""#,
                4 => r#", "allow": {"ips": ["10.0.0.0/8"]}"#,
                5 => r#", "canary": 50"#,
                _ => "",
            };
            format!(
                r#"{{"id": "ip", "expression": "true", "algorithm": "{algorithm}", "limit": {limit},
                    "period": "{period}", "key": ["ip"], "ratelimit_headers": {headers},
                    "fail_mode": "{fail}"{extra}}}"#
            )
        },
    )
}

/// Rules that, next to the per-IP one, take the set off the plan.
const OTHERS: [&str; 4] = [
    r#"{"id": "login", "expression": "http.request.uri.path eq \"/login\"",
        "algorithm": "fixed_window", "limit": 2, "period": "1m", "key": ["ip"],
        "penalty": "5s"}"#,
    r#"{"id": "user", "expression": "true", "algorithm": "sliding_window", "limit": 2,
        "period": "10s", "key": ["ip", "header:x-user"], "on_missing_key": "skip",
        "ratelimit_headers": true}"#,
    r#"{"id": "404s", "expression": "true", "algorithm": "fixed_window", "limit": 2,
        "period": "1m", "key": ["ip"], "count_statuses": ["404"]}"#,
    r#"{"id": "anon", "expression": "http.request.uri.path eq \"/\"",
        "algorithm": "fixed_window", "limit": 1,
        "period": "1m", "key": ["ip", "header:x-user"], "on_missing_key": "reject",
        "action": "log"}"#,
];

/// A rule set: the per-IP rule, alone half the time.
fn rule_set() -> impl Strategy<Value = String> {
    let others = prop::sample::subsequence(OTHERS.to_vec(), 0..=2);
    (ip_rule(), any::<bool>(), others)
        .prop_map(|(ip, alone, others)| {
            let mut rules = vec![ip];
            if !alone {
                rules.extend(others.iter().map(|s| s.to_string()));
            }
            format!("[{}]", rules.join(","))
        })
        .prop_filter("a set the rules accept", |json| {
            RuleSet::from_json_at(json, T0).is_ok()
        })
}

#[derive(Debug, Clone)]
enum Step {
    /// A request: the address (of `IPS`), `/login` or not, the `x-user`
    /// header or none, its cost, then the time to wait after it (ms).
    Request(usize, bool, Option<u8>, Option<u64>, u64),
    KillSwitch(bool),
    ConfigBlocking(bool),
}

fn step() -> impl Strategy<Value = Step> {
    let request = (0..IPS.len(), any::<bool>(), prop::option::of(0..2u8)).prop_flat_map(
        |(ip, login, user)| {
            (prop::option::of(1..3u64), 0..1500u64)
                .prop_map(move |(cost, wait)| Step::Request(ip, login, user, cost, wait))
        },
    );
    prop_oneof![
        20 => request,
        1 => any::<bool>().prop_map(Step::KillSwitch),
        1 => any::<bool>().prop_map(Step::ConfigBlocking),
    ]
}

fn request(ip: usize, login: bool, user: Option<u8>, cost: Option<u64>) -> RequestAttrs {
    let ip: IpAddr = IPS[ip].parse().expect("address");
    let mut req = RequestAttrs::new(ip).with_path(if login { "/login" } else { "/" });
    if let Some(u) = user {
        req = req.with_header("x-user", format!("u{u}"));
    }
    if let Some(c) = cost {
        req = req.with_cost(c);
    }
    req
}

/// The in-memory store, answering only through [`Backend::check`]: as a
/// backend that waits on the network does (the verdict is then a future).
#[derive(Debug, Default)]
struct Awaited(MemoryBackend);

impl Backend for Awaited {
    fn check<'a>(&'a self, batch: &'a Batch) -> BoxFuture<'a, Vec<Result<Decision, BackendError>>> {
        self.0.check(batch)
    }

    fn peek<'a>(
        &'a self,
        check: &'a Check,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Decision, BackendError>> {
        self.0.peek(check, now_ms)
    }
}

/// How a limiter of the test is set up (both of a pair alike).
#[derive(Debug, Clone, Copy)]
struct Setup {
    key: HashKey,
    backstop: bool,
    reports: bool,
    awaited: bool,
}

/// A limiter for `json` on its own clock and store, with or without its
/// compiled plans.
fn limiter(json: &str, setup: Setup, general: bool) -> (Limiter, ManualClock) {
    let clock = ManualClock::new(T0);
    let set = RuleSet::from_json_at(json, T0).expect("rules");
    let Setup {
        key,
        backstop,
        reports,
        awaited,
    } = setup;
    let mut b = Limiter::builder(set)
        .clock(clock.clone())
        .hash_key(key)
        .reports(reports);
    if awaited {
        b = b.backend(Awaited::default());
    }
    if backstop {
        b = b.backstop(3, 4);
    }
    if general {
        b = b.general_only();
    }
    (b.build(), clock)
}

/// Every rule's stats and stored state, for each address of `IPS`.
fn state_of(l: &Limiter) -> Vec<String> {
    let mut out = vec![format!("{:?}", l.stats())];
    for rule in l.rules().rules() {
        let stats = l.rule_stats(&rule.id).expect("stats");
        let counts: Vec<u64> = EVENTS.iter().map(|e| stats.get(*e)).collect();
        out.push(format!("{} {counts:?} {:?}", rule.id, stats.top_limited()));
        for ip in 0..IPS.len() {
            let req = request(ip, false, Some(0), None);
            out.push(format!("{:?}", block_on(l.peek(&rule.id, &req))));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_compiled_plan_answers_as_the_general_path(
        json in rule_set(),
        steps in prop::collection::vec(step(), 1..40),
        backstop in any::<bool>(),
        reports in any::<bool>(),
        awaited in any::<bool>(),
    ) {
        let setup = Setup { key: HashKey::random(), backstop, reports, awaited };
        let (fast, fast_clock) = limiter(&json, setup, false);
        let (general, general_clock) = limiter(&json, setup, true);
        for (i, step) in steps.iter().enumerate() {
            match *step {
                Step::Request(ip, login, user, cost, wait) => {
                    let req = request(ip, login, user, cost);
                    let (a, b) = (block_on(fast.check(&req)), block_on(general.check(&req)));
                    prop_assert_eq!(format!("{a:?}"), format!("{b:?}"), "step {}", i);
                    for clock in [&fast_clock, &general_clock] {
                        clock.advance(std::time::Duration::from_millis(wait));
                    }
                }
                Step::KillSwitch(on) => {
                    fast.switches().set_disable_rate_limiting(on);
                    general.switches().set_disable_rate_limiting(on);
                }
                Step::ConfigBlocking(on) => {
                    fast.switches().set_disable_config_blocking(on);
                    general.switches().set_disable_config_blocking(on);
                }
            }
        }
        prop_assert_eq!(state_of(&fast), state_of(&general));
    }
}

const SETUP: Setup = Setup {
    key: HashKey::DEFAULT,
    backstop: false,
    reports: false,
    awaited: false,
};

/// The sets that get a compiled plan: one plain site-wide `["ip"]` rule
/// and nothing else.
#[test]
fn only_a_lone_plain_ip_rule_is_compiled() {
    let plain = r#"{"id": "ip", "expression": "true", "algorithm": "token_bucket",
        "limit": 5, "burst": 5, "period": "1s", "key": ["ip"]}"#;
    let compiled = |rules: &[&str]| {
        let (l, _) = limiter(&format!("[{}]", rules.join(",")), SETUP, false);
        l.published().compiled.is_some()
    };
    assert!(compiled(&[plain]));
    let log = plain.replace(r#""key""#, r#""action": "log", "key""#);
    assert!(
        compiled(&[&log]),
        "a log rule is plain: the switches decide per request"
    );
    for other in OTHERS {
        assert!(!compiled(&[plain, other]), "{other}");
    }
    let not_plain = [
        plain.replace(r#""key": ["ip"]"#, r#""key": ["ip", "header:x-user"]"#),
        plain.replace(
            r#""expression": "true""#,
            r#""expression": "http.request.method eq \"GET\"""#,
        ),
        plain.replace(r#""key""#, r#""charge": "response", "key""#),
        plain.replace(r#""key""#, r#""canary": 10, "key""#),
        plain.replace(r#""key""#, r#""allow": {"ips": ["10.0.0.0/8"]}, "key""#),
    ];
    for rule in &not_plain {
        assert!(!compiled(&[rule]), "{rule}");
    }
}

/// A temporary rule added at run time takes the set off its plan, and
/// removing it puts the set back on.
#[test]
fn a_temporary_rule_takes_the_set_off_its_plan() {
    let plain = r#"[{"id": "ip", "expression": "true", "algorithm": "fixed_window",
        "limit": 5, "period": "1m", "key": ["ip"]}]"#;
    let (l, _) = limiter(plain, SETUP, false);
    let temp = crate::rules::RuleBuilder::new("block-one")
        .fixed_window(1, std::time::Duration::from_secs(60))
        .key(["ip"])
        .expires_at_ms(T0 + 60_000)
        .build()
        .expect("rule");
    l.add_temporary(temp).expect("added");
    assert!(l.published().compiled.is_none());
    assert!(l.remove_temporary("block-one"));
    assert!(l.published().compiled.is_some());
}

/// On the in-memory backend a compiled plan counts on the store directly
/// (`Backend::in_memory`), without a batch: its refusals still go to the
/// over-limit cache as the batch path's do, a penalty's to the penalty
/// cache only, and a backend that only wraps the store takes the batch
/// path.
#[test]
fn the_plan_remembers_refusals_on_either_backend() {
    let rule = |extra: &str| {
        format!(
            r#"[{{"id": "ip", "expression": "true", "algorithm": "fixed_window",
                "limit": 1, "period": "1m", "key": ["ip"]{extra}}}]"#
        )
    };
    let req = request(0, false, None, None);
    for (json, setup) in [
        (rule(""), SETUP),
        (
            rule(""),
            Setup {
                awaited: true,
                ..SETUP
            },
        ),
        (rule(r#", "penalty": "5m""#), SETUP),
    ] {
        let (l, _) = limiter(&json, setup, false);
        assert!(block_on(l.check(&req)).is_forward());
        assert!(!block_on(l.check(&req)).is_forward());
        let penalty = json.contains("penalty");
        let held = l.inner.caches.overlimit.clear();
        assert_eq!(
            held,
            usize::from(!penalty),
            "{json} awaited {}",
            setup.awaited
        );
        assert_eq!(l.penalty_cache().len(), usize::from(penalty), "{json}");
    }
}
