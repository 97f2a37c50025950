//! The fleet's workflow in one process, on the memory backend, with no
//! server: publish in log, read what the rule would have limited and whom,
//! promote to block (the counts carry over), lift a penalty, the kill
//! switch, and a rollback from the history.

use std::collections::BTreeMap;

use ratelimit_core::control::{Control, ControlError, MemoryControl, Switch};
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, Outcome, RequestAttrs};

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

fn login(action: &str, limit: u64) -> String {
    format!(
        r#"[{{"id": "login", "expression": "http.request.uri.path eq \"/login\"",
            "algorithm": "fixed_window", "limit": {limit}, "period": "1m", "key": ["ip"],
            "action": "{action}", "penalty": "10m"}}]"#
    )
}

#[test]
fn the_whole_workflow_runs_in_one_process() {
    let clock = ManualClock::new(1_767_225_600_000);
    let limiter = Limiter::builder(RuleSet::default())
        .clock(clock.clone())
        .build();
    let control = MemoryControl::new(limiter.clone(), "solo");
    let req = RequestAttrs::new("203.0.113.9".parse().unwrap()).with_path("/login");
    block_on(async {
        let v1 = control
            .publish(0, &login("log", 2), "in log", BTreeMap::new())
            .await
            .unwrap();
        for _ in 0..5 {
            assert!(limiter.check(&req).await.is_forward(), "log lets through");
        }
        let view = control.fleet().await.unwrap();
        let totals = view.rule_totals();
        assert_eq!((totals[0].allowed, totals[0].would_limit), (2, 3));
        let subject = limiter.subject_of("login", &req).unwrap();
        let top = view.top_subjects("login");
        assert_eq!(
            (top[0].subject, top[0].count),
            (subject, 3),
            "whom it would hit"
        );
        assert!(view.lagging(v1).is_empty());

        let v2 = control
            .publish(v1, &login("block", 2), "block", BTreeMap::new())
            .await
            .unwrap();
        let refused = limiter.check(&req).await;
        assert_eq!(
            refused.outcome,
            Outcome::Limited,
            "the log-phase count carries over"
        );
        assert_eq!(refused.retry_after_secs(), Some(600));

        control.lift("login", subject).await.unwrap();
        assert!(limiter.check(&req).await.is_forward(), "lifted");
        let err = control.lift("nope", subject).await.unwrap_err();
        assert_eq!(err, ControlError::Invalid("no rule \"nope\"".into()));

        for _ in 0..3 {
            let _ = limiter.check(&req).await;
        }
        control
            .set_switch(Switch::DisableRateLimiting, true)
            .await
            .unwrap();
        assert!(limiter.check(&req).await.is_forward(), "the kill switch");
        assert!(
            control
                .fleet()
                .await
                .unwrap()
                .switches
                .disable_rate_limiting
        );
        control
            .set_switch(Switch::DisableRateLimiting, false)
            .await
            .unwrap();

        // Roll back to version 1: publish its JSON again, as version 3.
        let history = control.history(10).await.unwrap();
        assert_eq!(
            history.iter().map(|p| p.version).collect::<Vec<_>>(),
            [v2, v1]
        );
        let old = history.iter().find(|p| p.version == v1).unwrap();
        let v3 = control
            .publish(v2, &old.json, "rollback to 1", BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(v3, 3);
        assert!(limiter.check(&req).await.is_forward(), "back in log");
    });
}

/// Rules added at run time go through the same seam in one process: the
/// limiter runs them, a publish keeps them, `fleet()` lists them with
/// their expiry and note until they expire, a removal and a bad rule are
/// answered as the fleet's control answers them.
#[test]
fn rules_added_at_run_time_go_through_the_control_in_one_process() {
    let t0 = 1_767_225_600_000;
    let clock = ManualClock::new(t0);
    let limiter = Limiter::builder(RuleSet::default())
        .clock(clock.clone())
        .build();
    let control = MemoryControl::new(limiter.clone(), "solo");
    let surge = |id: &str, expires: u64| {
        ratelimit_core::rules::RuleBuilder::new(id)
            .fixed_window(1, std::time::Duration::from_secs(60))
            .key(["ip"])
            .expires_at_ms(expires)
            .build()
            .unwrap()
    };
    let req = RequestAttrs::new("203.0.113.9".parse().unwrap()).with_path("/");
    block_on(async {
        control
            .add_temporary(surge("surge", t0 + 60_000), "autopilot: flood")
            .await
            .unwrap();
        limiter.check(&req).await;
        assert_eq!(limiter.check(&req).await.outcome, Outcome::Limited);
        control
            .publish(0, &login("log", 5), "meanwhile", BTreeMap::new())
            .await
            .unwrap();
        let view = control.fleet().await.unwrap();
        assert_eq!(view.temporary.len(), 1, "kept by the publish");
        let t = &view.temporary[0];
        assert_eq!(
            (
                t.rule.id.as_str(),
                t.note.as_str(),
                t.expires_at_ms(),
                t.added_ms
            ),
            ("surge", "autopilot: flood", t0 + 60_000, t0)
        );
        assert!(view.temporary_not_applied("surge").is_empty());
        // Replaced under its id, then refused when it would break the set.
        control
            .add_temporary(surge("surge", t0 + 120_000), "longer")
            .await
            .unwrap();
        assert_eq!(
            limiter.temporary_rules()[0].expires_at_ms,
            Some(t0 + 120_000)
        );
        for (bad, says) in [
            (surge("late", t0 + 86_400_001), "24 hours"),
            (surge("login", t0 + 1000), "\"login\""),
        ] {
            let err = control.add_temporary(bad, "").await.unwrap_err();
            assert!(
                matches!(&err, ControlError::Invalid(why) if why.contains(says)),
                "{err:?}"
            );
        }
        assert_eq!(limiter.temporary_rules().len(), 1, "the running one kept");
        clock.set_ms(t0 + 120_000);
        assert!(
            control.fleet().await.unwrap().temporary.is_empty(),
            "expired"
        );
        assert!(limiter.check(&req).await.is_forward());
        control
            .add_temporary(surge("again", t0 + 180_000), "")
            .await
            .unwrap();
        assert!(control.remove_temporary("again").await.unwrap());
        assert!(!control.remove_temporary("again").await.unwrap());
        assert!(limiter.temporary_rules().is_empty());
    });
}
