//! The fleet as an operator reads it, and the switches it shares.

use std::collections::BTreeMap;

use super::{InstanceReport, Published, RuleCounts, TopSubject};
use crate::switches::Switches;

/// One of the emergency switches ([`Switches`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Switch {
    /// The kill switch: every rule acts as `log`.
    DisableRateLimiting,
    /// The published rules' `block` acts as `log`.
    DisableConfigBlocking,
    /// Every JWT claim counts as missing.
    DisableJwt,
}

impl Switch {
    /// Every switch.
    pub const ALL: [Switch; 3] = [
        Switch::DisableRateLimiting,
        Switch::DisableConfigBlocking,
        Switch::DisableJwt,
    ];

    /// Its name, as stored and shown: `disable_rate_limiting`, ...
    pub fn name(self) -> &'static str {
        match self {
            Switch::DisableRateLimiting => "disable_rate_limiting",
            Switch::DisableConfigBlocking => "disable_config_blocking",
            Switch::DisableJwt => "disable_jwt",
        }
    }

    /// The switch named `name`.
    pub fn from_name(name: &str) -> Option<Switch> {
        Switch::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// The state of every switch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SwitchState {
    /// [`Switch::DisableRateLimiting`].
    pub disable_rate_limiting: bool,
    /// [`Switch::DisableConfigBlocking`].
    pub disable_config_blocking: bool,
    /// [`Switch::DisableJwt`].
    pub disable_jwt: bool,
}

impl SwitchState {
    /// The state of `switches` now.
    pub fn of(switches: &Switches) -> Self {
        Self {
            disable_rate_limiting: switches.rate_limiting_disabled(),
            disable_config_blocking: switches.config_blocking_disabled(),
            disable_jwt: switches.jwt_disabled(),
        }
    }

    /// Sets `switches` to this state.
    pub fn apply_to(&self, switches: &Switches) {
        switches.set_disable_rate_limiting(self.disable_rate_limiting);
        switches.set_disable_config_blocking(self.disable_config_blocking);
        switches.set_disable_jwt(self.disable_jwt);
    }

    /// Whether `switch` is on.
    pub fn get(&self, switch: Switch) -> bool {
        match switch {
            Switch::DisableRateLimiting => self.disable_rate_limiting,
            Switch::DisableConfigBlocking => self.disable_config_blocking,
            Switch::DisableJwt => self.disable_jwt,
        }
    }

    /// Turns `switch` on or off.
    pub fn set(&mut self, switch: Switch, on: bool) {
        match switch {
            Switch::DisableRateLimiting => self.disable_rate_limiting = on,
            Switch::DisableConfigBlocking => self.disable_config_blocking = on,
            Switch::DisableJwt => self.disable_jwt = on,
        }
    }
}

/// The fleet now: what is published, who runs what, the switches.
///
/// Exhaustive on purpose: a control store outside this crate
/// (`ratelimit-valkey`, a test's fake) builds it field by field from what
/// it stored; a new field changes the stored schema, a breaking release.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetView {
    /// The published version (its `json` may be left empty).
    pub published: Option<Published>,
    /// The instances that reported in the last minute, by id.
    pub instances: Vec<InstanceReport>,
    /// The switches as stored.
    pub switches: SwitchState,
}

impl FleetView {
    /// How many instances reported in the last minute (at least 1: the
    /// one asking).
    pub fn fleet_size(&self) -> u64 {
        (self.instances.len() as u64).max(1)
    }

    /// The instances that do not run `version` yet (or refused it).
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::control::{FleetView, InstanceReport};
    ///
    /// let at = |id: &str, v| InstanceReport { id: id.into(), running_version: v, ..Default::default() };
    /// let view = FleetView { instances: vec![at("a", 3), at("b", 2)], ..Default::default() };
    /// let lagging: Vec<&str> = view.lagging(3).iter().map(|r| r.id.as_str()).collect();
    /// assert_eq!(lagging, ["b"]);
    /// ```
    pub fn lagging(&self, version: u64) -> Vec<&InstanceReport> {
        self.instances
            .iter()
            .filter(|r| r.running_version != version)
            .collect()
    }

    /// The instances that refused `version`, with why.
    pub fn refusing(&self, version: u64) -> Vec<(&str, &str)> {
        self.instances
            .iter()
            .filter_map(|r| match &r.refused {
                Some((v, why)) if *v == version => Some((r.id.as_str(), why.as_str())),
                _ => None,
            })
            .collect()
    }

    /// The per-rule counters summed over the instances, by rule id.
    pub fn rule_totals(&self) -> Vec<RuleCounts> {
        let mut sum: BTreeMap<&str, RuleCounts> = BTreeMap::new();
        for c in self.instances.iter().flat_map(|r| &r.rules) {
            sum.entry(&c.rule)
                .or_insert_with(|| RuleCounts {
                    rule: c.rule.clone(),
                    ..RuleCounts::default()
                })
                .add(c);
        }
        sum.into_values().collect()
    }

    /// The top subjects of rule `rule` over the fleet: counts of the same
    /// subject summed across instances, most first.
    pub fn top_subjects(&self, rule: &str) -> Vec<TopSubject> {
        let mut sum: BTreeMap<crate::KeyDigest, TopSubject> = BTreeMap::new();
        let all = self.instances.iter().flat_map(|r| &r.top);
        for t in all.filter(|t| t.rule == rule) {
            sum.entry(t.subject)
                .and_modify(|s| {
                    s.count += t.count;
                    if s.label.is_none() {
                        s.label.clone_from(&t.label);
                    }
                })
                .or_insert_with(|| t.clone());
        }
        let mut v: Vec<TopSubject> = sum.into_values().collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then(a.subject.cmp(&b.subject)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyDigest;

    fn report(id: &str, limited: u64, top: u64) -> InstanceReport {
        InstanceReport {
            id: id.into(),
            rules: vec![RuleCounts {
                rule: "api".into(),
                requests: limited,
                limited,
                ..RuleCounts::default()
            }],
            top: vec![TopSubject {
                rule: "api".into(),
                subject: KeyDigest([7; 16]),
                label: Some("x".into()),
                count: top,
            }],
            ..InstanceReport::default()
        }
    }

    #[test]
    fn fleet_stats_are_the_sum_over_instances() {
        let view = FleetView {
            instances: vec![report("a", 3, 2), report("b", 4, 5)],
            ..FleetView::default()
        };
        assert_eq!(view.fleet_size(), 2);
        let totals = view.rule_totals();
        assert_eq!((totals[0].requests, totals[0].limited), (7, 7));
        assert_eq!(view.top_subjects("api")[0].count, 7);
        assert!(view.top_subjects("other").is_empty());
    }

    #[test]
    fn a_subject_unlabelled_on_one_instance_takes_the_label_of_another() {
        let mut unlabelled = report("a", 3, 2);
        unlabelled.top[0].label = None;
        let view = FleetView {
            instances: vec![unlabelled, report("b", 4, 5)],
            ..FleetView::default()
        };
        let top = view.top_subjects("api");
        assert_eq!((top[0].count, top[0].label.as_deref()), (7, Some("x")));
    }

    #[test]
    fn switch_names_round_trip() {
        for s in Switch::ALL {
            assert_eq!(Switch::from_name(s.name()), Some(s));
        }
        assert_eq!(Switch::from_name("nope"), None);
    }
}
