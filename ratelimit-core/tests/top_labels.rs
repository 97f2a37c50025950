//! The top list of a log rule labels every client it holds, however they
//! take turns (issue 39, finding 5: the labeller waited for one subject at
//! a time, so clients that alternated were never labelled).

use ratelimit_core::{rules::RuleSet, Limiter, RequestAttrs};

#[test]
fn three_clients_taking_turns_are_all_labelled() {
    let rules = RuleSet::from_json(
        r#"[{"id": "crawl", "expression": "true", "algorithm": "fixed_window",
        "limit": 3, "period": "1m", "key": ["ip", "header:x-tenant"], "action": "log"}]"#,
    )
    .expect("rules");
    let limiter = Limiter::new(rules);
    let clients = ["192.0.2.1", "192.0.2.2", "192.0.2.3"].map(|ip| {
        RequestAttrs::new(ip.parse().expect("ip")).with_header("x-tenant", format!("tenant-{ip}"))
    });
    for _ in 0..8 {
        for c in &clients {
            assert!(limiter.check(c).into_ready().expect("ready").is_forward());
        }
    }
    let top = limiter.rule_stats("crawl").expect("stats").top_hitters();
    let mut labels: Vec<_> = top.iter().map(|t| (t.label.clone(), t.count)).collect();
    labels.sort();
    let want = |ip: &str| (Some(format!("ip={ip}, header:x-tenant=tenant-{ip}")), 5);
    assert_eq!(
        labels,
        [want("192.0.2.1"), want("192.0.2.2"), want("192.0.2.3")],
        "{top:?}"
    );
}
