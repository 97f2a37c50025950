//! Backend-generic scenarios: the operator features, penalties and fail
//! modes, written once and run unchanged against every backend.
//!
//! A scenario is an `async fn(&impl Backends)`: it asks the [`Backends`]
//! for a backend of its own, two instances sharing state, or a backend it
//! can take down, builds limiters on them with a [`ManualClock`], and
//! asserts what the limiter promises whatever the backend.
//! [`scenarios!`](crate::scenarios!) turns the whole suite into `#[test]` functions for
//! one factory:
//!
//! ```no_run
//! // ratelimit-core/tests/scenarios.rs
//! ratelimit_testkit::scenarios!(ratelimit_testkit::scenarios::MemoryBackends);
//! ```
//!
//! | file | scenarios |
//! | --- | --- |
//! | `operator.rs` | cost, peek and reset, allow lists, temporary rules, canaries, stats, the login recipe, many tasks on one key |
//! | `penalty.rs` | the penalty cache, a penalty seen and reset by another instance, log rules never blocking |
//! | `fail_mode.rs` | `open`, `closed` and `local` with the backend down; a cached refusal standing through an outage |
//! | `charge.rs` | charging after the response: the exact retry, admission while not spent, penalties, two instances, publish, fail modes |
//! | `publish.rs` | what a publish keeps: a bucket's level across a rate or burst change, a window's count across a limit change, fresh on a period or algorithm change until changed back, a running penalty's end |
//! | `overlimit.rs` | the over-limit cache against the backend alone, backend calls in a flood, publish and reset |

mod charge;
mod fail_mode;
mod memory;
mod operator;
mod overlimit;
mod penalty;
mod probe;
mod publish;
mod valkey;

use std::future::Future;
use std::sync::Arc;

use ratelimit_core::backend::Backend;
use ratelimit_core::rules::RuleSet;
use ratelimit_core::{Limiter, ManualClock, RequestAttrs};

pub use charge::{
    a_charge_on_a_rule_published_away_or_of_zero_is_a_no_op,
    a_charge_past_the_limit_refuses_the_next_request_with_the_exact_retry,
    a_charge_past_the_limit_starts_the_penalty,
    a_charge_the_backend_cannot_take_goes_local_or_is_counted,
    instances_on_one_backend_share_the_charged_total,
    requests_are_admitted_while_the_budget_is_not_spent,
};
pub use fail_mode::{
    a_cached_refusal_stands_during_an_outage_until_its_admission,
    fail_modes_open_closed_and_log_never_closed, limited_beats_unavailable,
    local_fail_mode_counts_limit_divided_by_fleet,
};
pub use memory::MemoryBackends;
pub use operator::{
    allow_lists_bypass_the_chosen_rule_only, canary_blocks_for_its_share_of_subjects,
    cost_from_the_rule_and_from_the_application, login_recipe_across_two_instances,
    login_recipe_limits_ip_and_username_together, many_tasks_on_one_key_admit_exactly_the_limit,
    peek_does_not_count_and_reset_lifts_a_penalty,
    stats_show_the_top_subjects_a_log_rule_would_have_limited,
    temporary_rules_expire_within_a_day_and_keep_blocking,
};
pub use overlimit::{
    a_flood_asks_the_backend_once_per_earliest_admission,
    a_publish_drops_the_cached_refusals_of_its_rules, overlimit_cache_answers_as_the_backend_alone,
};
pub use penalty::{
    a_penalty_seen_by_another_instance_and_reset_there,
    another_instance_learns_a_penalty_from_the_shared_backend,
    log_rule_records_would_limit_and_a_penalty_never_blocks,
    penalty_cache_answers_without_the_backend,
};
pub use probe::Probe;
pub use publish::{
    a_burst_change_keeps_the_level, a_limit_change_keeps_the_window_count,
    a_rate_change_keeps_the_bucket_level, a_running_penalty_keeps_its_end,
    period_algorithm_and_removal_start_fresh_until_changed_back,
};
pub use valkey::ValkeyBackends;

/// The time every scenario starts at: 2026-01-01T00:00:00Z, in Unix ms.
pub const T0: u64 = 1_767_225_600_000;

/// The backends a scenario runs on.
pub trait Backends: Sync {
    /// A backend whose state nothing else shares.
    fn fresh(&self) -> impl Future<Output = Arc<dyn Backend>> + Send;

    /// Two backends on one shared state, as two instances of a fleet see
    /// it (each with connections of its own where the backend has any).
    fn pair(&self) -> impl Future<Output = [Arc<dyn Backend>; 2]> + Send;

    /// A backend of its own and the switch that takes it down: every call
    /// fails while it is down, as when Valkey is unreachable.
    fn breakable(&self) -> impl Future<Output = (Arc<dyn Backend>, Box<dyn Outage>)> + Send;
}

/// Takes a backend down and up again.
pub trait Outage: Send + Sync {
    /// Down (`true`): every call fails. Up (`false`): calls go through.
    fn set_down(&self, down: bool);
}

/// A multi-thread runtime for one scenario (the
/// [`scenarios!`](crate::scenarios!) tests run each on one).
///
/// # Panics
///
/// When the runtime cannot start.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// `json` loaded at [`T0`].
///
/// # Panics
///
/// When the rules are invalid.
pub fn rules(json: &str) -> RuleSet {
    RuleSet::from_json_at(json, T0).expect("valid rules")
}

/// A limiter over `json` on `backend`, with a [`ManualClock`] at [`T0`].
pub fn limiter_on(backend: Arc<dyn Backend>, json: &str) -> (Limiter, ManualClock) {
    let clock = ManualClock::new(T0);
    let l = Limiter::builder(rules(json))
        .clock(clock.clone())
        .backend_arc(backend)
        .build();
    (l, clock)
}

/// A request from `ip` for `path`.
///
/// # Panics
///
/// When `ip` is not an address.
pub fn req(ip: &str, path: &str) -> RequestAttrs {
    RequestAttrs::new(ip.parse().expect("ip")).with_path(path)
}

/// A rule object: `id`, `expr` (quoted for JSON here), a fixed window of
/// 2 a minute keyed on the IP, then the `extra` fields (`, "limit": 1`).
pub fn rule(id: &str, expr: &str, extra: &str) -> String {
    let expr = expr.replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        r#"{{"id": "{id}", "expression": "{expr}", "algorithm": "fixed_window", "limit": 2,
        "period": "1m", "key": ["ip"]{extra}}}"#
    )
}

/// Every scenario as a `#[test]` function on the [`Backends`] that
/// `$backends` makes (evaluated once per test, on the test's runtime).
#[macro_export]
macro_rules! scenarios {
    ($backends:expr) => {
        $crate::scenarios!(@each $backends;
            cost_from_the_rule_and_from_the_application,
            peek_does_not_count_and_reset_lifts_a_penalty,
            allow_lists_bypass_the_chosen_rule_only,
            temporary_rules_expire_within_a_day_and_keep_blocking,
            canary_blocks_for_its_share_of_subjects,
            stats_show_the_top_subjects_a_log_rule_would_have_limited,
            login_recipe_limits_ip_and_username_together,
            login_recipe_across_two_instances,
            many_tasks_on_one_key_admit_exactly_the_limit,
            penalty_cache_answers_without_the_backend,
            another_instance_learns_a_penalty_from_the_shared_backend,
            a_penalty_seen_by_another_instance_and_reset_there,
            log_rule_records_would_limit_and_a_penalty_never_blocks,
            fail_modes_open_closed_and_log_never_closed,
            limited_beats_unavailable,
            local_fail_mode_counts_limit_divided_by_fleet,
            a_cached_refusal_stands_during_an_outage_until_its_admission,
            overlimit_cache_answers_as_the_backend_alone,
            a_flood_asks_the_backend_once_per_earliest_admission,
            a_publish_drops_the_cached_refusals_of_its_rules,
            a_charge_past_the_limit_refuses_the_next_request_with_the_exact_retry,
            requests_are_admitted_while_the_budget_is_not_spent,
            a_charge_past_the_limit_starts_the_penalty,
            instances_on_one_backend_share_the_charged_total,
            a_charge_on_a_rule_published_away_or_of_zero_is_a_no_op,
            a_charge_the_backend_cannot_take_goes_local_or_is_counted,
            a_rate_change_keeps_the_bucket_level,
            a_limit_change_keeps_the_window_count,
            a_burst_change_keeps_the_level,
            period_algorithm_and_removal_start_fresh_until_changed_back,
            a_running_penalty_keeps_its_end,
        );
    };
    (@each $backends:expr; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $crate::scenarios::runtime().block_on(async {
                    let backends = $backends;
                    $crate::scenarios::$name(&backends).await;
                });
            }
        )*
    };
}
