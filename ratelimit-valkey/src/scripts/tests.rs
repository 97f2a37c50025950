//! Unit tests of the scripts module: sources, hashes, the arguments of
//! each mode, and the key names.

use super::*;
use ratelimit_core::backend::{BackendErrorKind, CheckMode};
use ratelimit_core::rules::RuleBuilder;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn every_script_has_the_prelude_and_its_argument_check() {
    let names = [
        "fixed_window",
        "sliding_window",
        "token_bucket",
        "leaky_bucket",
        "distinct",
    ];
    // The check each script runs: the leaky bucket's is the token
    // bucket's (its level is the tokens spent).
    let files = [
        "fixed_window",
        "sliding_window",
        "token_bucket",
        "token_bucket",
        "distinct",
    ];
    for (i, src) in SOURCES.iter().enumerate() {
        assert!(src.starts_with("-- Shared prelude"), "{i}");
        assert_eq!(src.matches("-- The time of the call").count(), 1, "{i}");
        let checks = |name: &str| src.contains(&format!("-- The {} check", name.replace('_', " ")));
        // Each check: begin.lua, the common path, the helpers, the rest.
        let begin = "-- Starts one check (see the prelude)";
        let helpers = "-- The helpers the checks share";
        let count = |s: &str| src.matches(s).count();
        if i == BATCH {
            assert!(files.iter().all(|n| checks(n)));
            assert!(!checks("leaky_bucket"));
            assert!(names.iter().enumerate().all(|(j, n)| src.contains(&format!(
                "\n{n} = function(k, o, now, offset)\nlocal ALG = '{}'\n{begin}",
                j + 1
            ))));
            assert_eq!((count(begin), count(helpers)), (5, 5));
            assert!(src.contains("'wrong number of arguments for the keys'"));
            assert!(src.contains("pcall(run, KEYS[i], o, now, offset)"));
        } else {
            assert!(names.iter().all(|n| checks(n) == (*n == files[i])), "{i}");
            assert!(
                src.contains("\nlocal k, o = KEYS[1], 1\nlocal tail = o + 1 + "),
                "{i}"
            );
            assert!(
                src.contains(&format!("end\nlocal ALG = '{}'\n{begin}", i + 1)),
                "{i}"
            );
            assert_eq!((count(begin), count(helpers)), (1, 1), "{i}");
            assert!(!src.contains("= function(k, o, now, offset)\n"), "{i}");
        }
    }
}

/// The head and parameters of a check of `rule` (with a 9 s penalty).
fn args(rule: RuleBuilder, cost: u64, mode: CheckMode) -> (String, Vec<u64>) {
    use ratelimit_core::backend::Check;
    let rule = Arc::new(
        rule.key(["ip"])
            .penalty(Duration::from_secs(9))
            .build()
            .expect("rule"),
    );
    let subject = ratelimit_core::HashKey::DEFAULT.digest(b"203.0.113.7");
    let (ns, quota) = (Check::namespace_of(&rule).into(), rule.quota(cost));
    let check =
        Check::new(rule.clone(), ns, subject, quota, rule.penalty_ms, Some(1)).with_mode(mode);
    let inv = invocation("rl:", &check, 5, TimeSource::Injected).expect("invocation");
    assert_eq!(inv.now, Some(5));
    let params = inv
        .args
        .iter()
        .map(|a| match *a {
            Arg::U(v) | Arg::Digits10(v) => v,
            Arg::I(_) => u64::MAX,
        })
        .collect();
    (inv.head.encode(), params)
}

/// The check's head: the algorithm's digit, then the mode's, the penalty
/// and the cost; a probe starts no penalty; a charge's bucket units are
/// bounded as the core bounds a debt.
#[test]
fn the_head_holds_the_mode_and_penalty() {
    let m = Duration::from_secs(60);
    let fw = || RuleBuilder::new("a").fixed_window(10, m);
    let head = |a, c, mode| args(a, c, mode).0;
    assert_eq!(
        args(fw(), 1, CheckMode::Count),
        ("109000".into(), vec![10, 60_000])
    );
    assert_eq!(head(fw(), 1, CheckMode::Probe), "11");
    assert_eq!(
        args(fw(), 7, CheckMode::Charge),
        ("129000x7".into(), vec![10, 60_000])
    );
    let tb = || RuleBuilder::new("b").token_bucket(10, m, 5);
    assert_eq!(
        args(tb(), 2, CheckMode::Charge),
        ("329000x2".into(), vec![10, 300_000, 60_000])
    );
    let huge = format!("329000x{}", u64::MAX);
    assert_eq!(head(tb(), u64::MAX, CheckMode::Charge), huge);
    // The leaky bucket's are the token bucket's.
    let lb = || RuleBuilder::new("c").leaky_bucket(10, m, 5);
    assert_eq!(
        args(lb(), 3, CheckMode::Charge),
        ("429000x3".into(), vec![10, 300_000, 60_000])
    );
}

/// A count of cost 1 without a penalty: its algorithm's digit alone; else
/// the mode's digit, a penalty's and a cost's follow.
#[test]
fn a_count_without_a_penalty_is_the_digit_alone() {
    let h = |algorithm, mode, penalty, cost| {
        Head {
            algorithm,
            mode,
            penalty,
            cost,
        }
        .encode()
    };
    assert_eq!(h(2, 0, 0, 1), "2");
    assert_eq!(h(3, 2, 0, 1), "32");
    assert_eq!(h(5, 0, 30_000, 1), "5030000");
    assert_eq!(h(4, 2, u64::MAX, 1), format!("42{}", u64::MAX));
    assert_eq!(h(1, 0, 0, 0), "10x0");
    assert_eq!(h(2, 1, 0, 7), "21x7");
    assert_eq!(h(3, 0, 9, 12), "309x12");
}

#[test]
fn a_bucket_limit_past_ten_digits_is_refused() {
    let tb = RuleBuilder::new("b").token_bucket(10, Duration::from_secs(1), 5);
    let rule = Arc::new(tb.key(["ip"]).build().expect("rule"));
    let subject = ratelimit_core::HashKey::DEFAULT.digest(b"x");
    let check_of = |limit| {
        let quota = ratelimit_core::algorithm::CheckQuota::new(limit, 1000);
        Check::new(rule.clone(), "b".into(), subject, quota, None, None)
    };
    let fits = invocation("rl:", &check_of(9_999_999_999), 5, TimeSource::Injected);
    assert!(fits.is_ok(), "{fits:?}");
    let err = invocation("rl:", &check_of(10_000_000_000), 5, TimeSource::Injected).unwrap_err();
    assert_eq!(err.kind(), BackendErrorKind::Protocol);
    assert!(err.to_string().contains("10000000000"), "{err}");
}

#[test]
fn distinct_rules_only_count() {
    let dc = || RuleBuilder::new("d").distinct("path", 10, Duration::from_secs(60));
    let rule = Arc::new(dc().key(["ip"]).build().expect("rule"));
    for mode in [CheckMode::Probe, CheckMode::Charge] {
        let check = Check::new(
            rule.clone(),
            "d".into(),
            ratelimit_core::HashKey::DEFAULT.digest(b"x"),
            rule.quota(1),
            None,
            Some(1),
        )
        .with_mode(mode);
        let err = invocation("rl:", &check, 5, TimeSource::Injected).unwrap_err();
        assert_eq!(err.kind(), BackendErrorKind::Unsupported);
        assert!(err.to_string().contains("rule d"), "{err}");
    }
}

#[test]
fn script_hashes_differ() {
    let hashes: std::collections::HashSet<_> = (0..=BATCH)
        .map(|i| script(i).get_hash().to_string())
        .collect();
    assert_eq!(hashes.len(), 6);
}

/// Every algorithm the core knows has its own script, named after it (the
/// leaky bucket's runs the token bucket's check), and its checks' heads
/// carry that script's digit: none falls through to another algorithm's
/// script.
#[test]
fn every_algorithm_runs_its_own_script() {
    use ratelimit_core::algorithm::Algorithm;
    let mut seen = Vec::new();
    for algorithm in Algorithm::ALL {
        let i = index(algorithm).expect("a script for every algorithm");
        assert!(!seen.contains(&i), "{algorithm:?} shares script {i}");
        seen.push(i);
        let src = script_source(algorithm).expect("a source");
        // The leaky bucket runs the token bucket's check under its own
        // digit (its level is the tokens spent).
        let check = match algorithm {
            Algorithm::LeakyBucket => Algorithm::TokenBucket,
            a => a,
        };
        let title = format!("-- The {} check", check.as_str().replace('_', " "));
        assert!(src.contains(&title), "{algorithm:?}: {title}");
        assert!(src.contains(&format!("local ALG = '{}'", i + 1)));
        let (rule, minute) = (RuleBuilder::new("a"), Duration::from_secs(60));
        let rule = match algorithm {
            Algorithm::FixedWindow => rule.fixed_window(5, minute),
            Algorithm::SlidingWindow => rule.sliding_window(5, minute),
            Algorithm::TokenBucket => rule.token_bucket(5, minute, 5),
            Algorithm::LeakyBucket => rule.leaky_bucket(5, minute, 5),
            Algorithm::Distinct => rule.distinct("path", 5, minute),
            _ => panic!("no test rule for {algorithm:?}"),
        };
        let (head, _) = args(rule, 1, CheckMode::Count);
        assert!(
            head.starts_with(&(i + 1).to_string()),
            "{algorithm:?}: {head}"
        );
    }
}

// The Valkey key names (`key_of`) and their encoding.

#[test]
fn base64url_encodes_like_the_rfc() {
    let enc = |b: &[u8]| {
        let mut s = String::new();
        super::base64url(b, &mut s);
        s
    };
    assert_eq!(enc(b""), "");
    assert_eq!(enc(b"f"), "Zg");
    assert_eq!(enc(b"fo"), "Zm8");
    assert_eq!(enc(b"foo"), "Zm9v");
    assert_eq!(enc(b"foobar"), "Zm9vYmFy");
    assert_eq!(enc(&[0xfb, 0xff]), "-_8");
}

/// Keys recorded before base64url moved to the `base64` crate: live
/// counters are stored under them.
#[test]
fn keys_are_the_recorded_ones() {
    use ratelimit_core::backend::Check;
    use ratelimit_core::HashKey;

    let key = |id: &str, ip: &[u8]| {
        let rule = RuleBuilder::new(id)
            .key(["ip"])
            .fixed_window(5, Duration::from_secs(60))
            .build()
            .expect("rule");
        let rule = Arc::new(rule);
        let check = Check::new(
            rule.clone(),
            Check::namespace_of(&rule).into(),
            HashKey::DEFAULT.digest(ip),
            rule.quota(1),
            None,
            None,
        );
        super::key_of("rl:", &check)
    };
    let recorded = [
        ("api", &b"203.0.113.7"[..], "rl:{HFsaY4CNi7y07b0Y}SgnxfA"),
        ("login", &b"198.51.100.1"[..], "rl:{24qOiIXLtwl_LDnV}NElrzQ"),
        ("api", &b""[..], "rl:{-kkuG4VwGZxChnYH}SgnxfA"),
    ];
    for (id, ip, k) in recorded {
        assert_eq!(key(id, ip), k);
        assert_eq!(k.len(), 27);
    }
}
