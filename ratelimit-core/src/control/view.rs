//! The fleet as an operator reads it.

use std::collections::BTreeMap;

use super::{InstanceReport, Published, RuleCounts, SwitchState, TemporaryRule, TopSubject};

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
    /// The last lift's sequence number as stored (0: none).
    pub lift_seq: u64,
    /// The rules added at run time that have not expired, soonest to
    /// expire first.
    pub temporary: Vec<TemporaryRule>,
    /// The parts of the control state that cannot be read, each naming
    /// the key and what it should hold.
    pub problems: Vec<String>,
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

    /// The instances that do not run the stored switches (a build that
    /// does not report its switches is not counted).
    ///
    /// # Examples
    ///
    /// ```
    /// use ratelimit_core::control::{FleetView, InstanceReport, Switch, SwitchState};
    ///
    /// let mut on = SwitchState::default();
    /// on.set(Switch::DisableRateLimiting, true);
    /// let at = |id: &str, s| InstanceReport { id: id.into(), switches: Some(s), ..Default::default() };
    /// let view = FleetView {
    ///     switches: on,
    ///     instances: vec![at("a", on), at("b", SwitchState::default())],
    ///     ..Default::default()
    /// };
    /// let late: Vec<&str> = view.switches_not_applied().iter().map(|r| r.id.as_str()).collect();
    /// assert_eq!(late, ["b"]);
    /// ```
    pub fn switches_not_applied(&self) -> Vec<&InstanceReport> {
        self.instances
            .iter()
            .filter(|r| r.switches.is_some_and(|s| s != self.switches))
            .collect()
    }

    /// The instances that have not applied the last lift.
    pub fn lifts_not_applied(&self) -> Vec<&InstanceReport> {
        self.instances
            .iter()
            .filter(|r| r.lift_seq < self.lift_seq)
            .collect()
    }

    /// The instances that do not run the rule added at run time `id`.
    pub fn temporary_not_applied(&self, id: &str) -> Vec<&InstanceReport> {
        self.instances
            .iter()
            .filter(|r| !r.temporary.iter().any(|(t, _)| t == id))
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
}
