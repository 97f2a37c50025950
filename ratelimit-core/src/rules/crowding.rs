//! Rule sets where the cap of rules per request leaves blocking rules out.

use super::caps::MAX_OTHER_RULES;
use super::error::Warning;
use super::rule::Rule;

/// A warning for each group of more than [`MAX_OTHER_RULES`] blocking rules
/// (not site-wide, not count rules) that one request can match: the cap
/// then leaves some out of evaluation, and a client picks which by what it
/// sends. Rules whose expressions pin the path to different values
/// (`http.request.uri.path eq` / `in`) cannot match together; every other
/// pair is assumed to.
pub(super) fn crowded(rules: &[Rule]) -> Vec<Warning> {
    let blocking: Vec<(&Rule, Option<Vec<&str>>)> = rules
        .iter()
        .filter(|r| r.is_blocking() && !r.is_site_wide() && !r.is_count_rule())
        .map(|r| (r, r.expression.pinned_paths()))
        .collect();
    let mut paths: Vec<Option<&str>> = vec![None];
    for (_, pinned) in &blocking {
        paths.extend(pinned.iter().flatten().map(|p| Some(*p)));
    }
    paths.sort_unstable();
    paths.dedup();
    let mut groups: Vec<Vec<&Rule>> = Vec::new();
    for path in paths {
        let group: Vec<&Rule> = blocking
            .iter()
            .filter(|(_, pinned)| match (pinned, path) {
                (None, _) => true,
                (Some(list), Some(p)) => list.contains(&p),
                (Some(_), None) => false,
            })
            .map(|(r, _)| *r)
            .collect();
        let same = |g: &Vec<&Rule>| {
            g.len() == group.len() && g.iter().zip(&group).all(|(a, b)| a.id == b.id)
        };
        if group.len() > MAX_OTHER_RULES && !groups.iter().any(same) {
            groups.push(group);
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let names: Vec<&str> = g.iter().map(|r| r.id.as_str()).collect();
            Warning {
                rule: g[MAX_OTHER_RULES].id.clone(),
                field: "expression".to_owned(),
                message: format!(
                    "{} blocking rules can match one request ({}); at most {MAX_OTHER_RULES} \
                     run, blocking rules in the order written, so a client that makes the first \
                     ones match pushes the others out (a running penalty still applies)",
                    g.len(),
                    names.join(", ")
                ),
            }
        })
        .collect()
}
