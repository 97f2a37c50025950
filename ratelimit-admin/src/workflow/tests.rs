use super::*;

const RUNNING: &str = r#"[
  {"id": "login", "expression": "true", "algorithm": "fixed_window", "limit": 5,
   "period": "1m", "key": ["ip"], "action": "log"}
]"#;

fn running() -> RuleSet {
    RuleSet::from_json(RUNNING).unwrap()
}

#[test]
fn a_new_rule_is_published_as_log() {
    let draft = r#"[
      {"id": "login", "expression": "true", "algorithm": "fixed_window", "limit": 5,
       "period": "1m", "key": ["ip"], "action": "log"},
      {"id": "search", "expression": "http.request.uri.path eq \"/s\"",
       "algorithm": "fixed_window", "limit": 9, "period": "1m", "key": ["ip"]}
    ]"#;
    let c = check(draft, &running());
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    let set = RuleSet::from_json(c.json.as_deref().unwrap()).unwrap();
    assert_eq!(set.get("search").unwrap().action, Action::Log);
    assert!(c.notes[0].contains("\"search\" is new"), "{:?}", c.notes);
}

#[test]
fn log_to_block_without_a_canary_is_refused_naming_rule_and_field() {
    let draft = RUNNING.replace("\"log\"", "\"block\"");
    let c = check(&draft, &running());
    assert_eq!(c.json, None);
    assert!(
        c.errors[0].contains("rule \"login\", field \"action\""),
        "{:?}",
        c.errors
    );
    let canary = set_rollout(RUNNING, "login", Rollout::Canary(10.0)).unwrap();
    let c = check(&canary, &running());
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    assert_eq!(
        RuleSet::from_json(&canary)
            .unwrap()
            .get("login")
            .unwrap()
            .canary_bp,
        Some(1_000)
    );
}

#[test]
fn a_set_that_does_not_load_names_the_rule_and_field() {
    let c = check(&RUNNING.replace("\"limit\": 5", "\"limit\": 0"), &running());
    assert!(
        c.errors[0].contains("\"login\"") && c.errors[0].contains("\"limit\""),
        "{:?}",
        c.errors
    );
    for junk in ["", "{", "[1]", "{\"rules\": 3}", "\"x\""] {
        let c = check(junk, &running());
        assert_eq!((c.json.is_none(), c.errors.len()), (true, 1), "{junk:?}");
    }
    let huge = format!("[{}]", " ".repeat(Published::MAX_SET_BYTES));
    assert!(check(&huge, &running()).errors[0].contains("bytes"));
}

/// Issue 41: every error of the draft is shown, each on its own.
#[test]
fn every_error_of_the_draft_is_shown_apart() {
    let draft = RUNNING
        .replace("\"limit\": 5", "\"limit\": 0")
        .replace("\"1m\"", "\"1 minute\"");
    let c = check(&draft, &running());
    assert_eq!(c.errors.len(), 2, "{:?}", c.errors);
    assert!(c.errors[0].starts_with("rule \"login\", field \"period\""));
    assert!(c.errors[1].starts_with("rule \"login\", field \"limit\""));
}

#[test]
fn rollouts_and_rule_edits_keep_the_other_rules() {
    let two = put_rule(
        RUNNING,
        "api",
        rules_of(&RUNNING.replace("login", "api")).unwrap().pop(),
    )
    .unwrap();
    assert_eq!(rules_of(&two).unwrap().len(), 2);
    let blocked = set_rollout(&two, "api", Rollout::Block).unwrap();
    let set = RuleSet::from_json(&blocked).unwrap();
    assert_eq!(set.get("api").unwrap().action, Action::Block);
    assert_eq!(set.get("login").unwrap().action, Action::Log);
    assert!(set_rollout(&two, "api", Rollout::Canary(100.0)).is_err());
    assert!(set_rollout(&two, "nope", Rollout::Log).is_err());
    let one = put_rule(&two, "api", None).unwrap();
    assert_eq!(rules_of(&one).unwrap().len(), 1);
    assert_eq!(id_of(&rule_of(&one, "login").unwrap()), "login");
}
