//! The workflow's actions (POST, CSRF-checked, logged at info): check a
//! draft, put one rule in it, publish it, move a rule to a canary, to
//! block or back to log, roll back to a published version. Each publish
//! goes through the [`Control`](ratelimit_core::control::Control), starting
//! from the version the page showed (compare-and-set).

use std::collections::BTreeMap;

use axum::extract::rejection::FormRejection;
use axum::extract::{OriginalUri, State};
use axum::response::Response;
use axum::Form;
use http::{HeaderMap, StatusCode, Uri};
use ratelimit_core::control::{ControlError, FleetView, Published};
use ratelimit_core::rules::RuleSet;
use serde_json::{Map, Value};

use crate::html::Draft;
use crate::routes::{back, csrf_ok, field, refuse, render, AdminState, Fields, Shared};
use crate::workflow::{self, phases, Rollout};

/// One POST: the state, where it was sent, its headers and its form.
pub(crate) struct Post<'a> {
    st: &'a AdminState,
    original: Uri,
    uri: Uri,
    headers: HeaderMap,
    form: Fields,
}

impl Post<'_> {
    fn get(&self, name: &str) -> &str {
        field(&self.form, name).unwrap_or("")
    }

    fn note(&self, default: String) -> String {
        let n = self.get("note").trim();
        if n.is_empty() {
            default
        } else {
            n.chars().take(500).collect()
        }
    }

    async fn page(&self, draft: Draft, status: StatusCode) -> Response {
        render(
            self.st,
            &self.original,
            &self.uri,
            &self.headers,
            Some(draft),
            status,
        )
        .await
    }

    /// The published version, its set (the running one when nothing was
    /// published yet), and the fleet.
    async fn published(&self) -> Result<(Option<Published>, String, FleetView), ControlError> {
        let current = self.st.control.current().await?;
        let json = current
            .as_ref()
            .map_or_else(|| self.st.limiter.rules().to_json(), |p| p.json.clone());
        Ok((current, json, self.st.control.fleet().await?))
    }

    /// Publishes `json` from the form's `version`, with `ann`; back to the
    /// page, or the page with the draft and why it was refused.
    async fn publish(&self, json: String, note: String, ann: BTreeMap<String, String>) -> Response {
        let from = self.get("version").parse::<u64>().unwrap_or(0);
        match self.st.control.publish(from, &json, &note, ann).await {
            Ok(version) => {
                tracing::info!(target: "ratelimit_admin", version, note = %note, "admin: rule set published");
                back(&self.original, &self.uri)
            }
            Err(e) => {
                tracing::warn!(target: "ratelimit_admin", from, error = %e, "admin: publish refused");
                let status = match e {
                    ControlError::Conflict { .. } | ControlError::Held { .. } => {
                        StatusCode::CONFLICT
                    }
                    ControlError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
                    _ => StatusCode::SERVICE_UNAVAILABLE,
                };
                let message = match e {
                    ControlError::Conflict { current } => format!(
                        "Not published: another publish came first, version {current} is \
                         published. Your draft is below: reload to start again from version {current}."
                    ),
                    e => format!("Not published: {e}"),
                };
                let draft = Draft {
                    json,
                    note,
                    checked: None,
                    message: Some(message),
                };
                self.page(draft, status).await
            }
        }
    }
}

/// Reads a POST, checking its CSRF token.
macro_rules! post {
    ($st:expr, $original:expr, $uri:expr, $headers:expr, $form:expr) => {{
        let form = $form.map(|Form(f)| f).unwrap_or_default();
        if !csrf_ok(&$st, &$headers, &form).await {
            return refuse(StatusCode::FORBIDDEN, "missing or wrong CSRF token");
        }
        Post {
            st: &$st,
            original: $original,
            uri: $uri,
            headers: $headers,
            form,
        }
    }};
}

/// Declares a POST handler whose body is `$body(post) -> Response`.
macro_rules! handler {
    ($(#[$doc:meta])* $name:ident, $body:ident) => {
        $(#[$doc])*
        pub(crate) async fn $name(
            State(st): Shared,
            OriginalUri(original): OriginalUri,
            uri: Uri,
            headers: HeaderMap,
            form: Result<Form<Fields>, FormRejection>,
        ) -> Response {
            let p = post!(st, original, uri, headers, form);
            $body(&p).await
        }
    };
}

handler!(
    /// `POST /check` (`json`, `note`): the page with the draft and what
    /// checking it found.
    check, do_check
);
handler!(
    /// `POST /rule` (`json`, `id`, `expression`, `algorithm`, `limit`,
    /// `period`, `key`): the draft with that rule put in (in `log`), checked.
    rule, do_rule
);
handler!(
    /// `POST /publish` (`json`, `note`, `version`): publishes the draft.
    publish, do_publish
);
handler!(
    /// `POST /canary` (`rule`, `percent`, `version`): the rule blocks for
    /// that share of clients; its log phase becomes the guard's baseline.
    canary, do_canary
);
handler!(
    /// `POST /promote` (`rule`, `version`): the rule blocks for everyone.
    promote, do_promote
);
handler!(
    /// `POST /demote` (`rule`, `version`): the rule back to log.
    demote, do_demote
);
handler!(
    /// `POST /rollback` (`to`, `version`): publishes version `to`'s set again.
    rollback, do_rollback
);

async fn checked(p: &Post<'_>, json: String, note: String) -> Response {
    let running = match p.published().await {
        Ok((_, j, _)) => RuleSet::from_json(&j).unwrap_or_default(),
        Err(_) => p.st.limiter.rules().clone(),
    };
    let c = workflow::check(&json, &running);
    let draft = Draft {
        json,
        note,
        checked: Some(c),
        message: None,
    };
    p.page(draft, StatusCode::OK).await
}

async fn do_check(p: &Post<'_>) -> Response {
    checked(p, p.get("json").to_owned(), p.get("note").to_owned()).await
}

async fn do_rule(p: &Post<'_>) -> Response {
    let id = p.get("id").trim();
    let mut r = Map::new();
    r.insert("id".into(), id.into());
    for f in ["expression", "algorithm", "period"] {
        r.insert(f.into(), p.get(f).trim().into());
    }
    let limit = p.get("limit").trim();
    r.insert(
        "limit".into(),
        limit
            .parse::<u64>()
            .map_or_else(|_| limit.into(), Value::from),
    );
    let key: Vec<Value> = p.get("key").split(',').map(|k| k.trim().into()).collect();
    r.insert("key".into(), key.into());
    r.insert("action".into(), "log".into());
    match workflow::put_rule(p.get("json"), id, Some(r)) {
        Ok(json) => checked(p, json, p.get("note").to_owned()).await,
        Err(e) => {
            checked(
                p,
                p.get("json").to_owned(),
                format!("{} ({e})", p.get("note")),
            )
            .await
        }
    }
}

async fn do_publish(p: &Post<'_>) -> Response {
    let (current, running, view) = match p.published().await {
        Ok(x) => x,
        Err(e) => return crate::routes::unavailable(e),
    };
    let set = RuleSet::from_json(&running).unwrap_or_default();
    let c = workflow::check(p.get("json"), &set);
    let Some(json) = c.json.clone() else {
        let draft = Draft {
            json: p.get("json").to_owned(),
            note: p.get("note").to_owned(),
            checked: Some(c),
            message: Some("Not published: the check found errors.".into()),
        };
        return p.page(draft, StatusCode::UNPROCESSABLE_ENTITY).await;
    };
    let ann = phases::carry(current.as_ref(), &json, &view, p.st.limiter.now_ms());
    p.publish(json, p.note("published from the admin page".into()), ann)
        .await
}

/// Moves the form's rule to `to` in the published set, and publishes.
async fn move_rule(p: &Post<'_>, to: Rollout, what: String) -> Response {
    let (current, running, view) = match p.published().await {
        Ok(x) => x,
        Err(e) => return crate::routes::unavailable(e),
    };
    let rule = p.get("rule");
    let json = match workflow::set_rollout(&running, rule, to) {
        Ok(j) => j,
        Err(e) => return refuse_owned(StatusCode::BAD_REQUEST, e),
    };
    let now = p.st.limiter.now_ms();
    let mut ann = phases::carry(current.as_ref(), &json, &view, now);
    if let Rollout::Canary(pct) = to {
        let set = match RuleSet::from_json(&json) {
            Ok(s) => s,
            Err(e) => return refuse_owned(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
        };
        let bp = (pct * 100.0).round() as u32;
        phases::start_canary(&mut ann, current.as_ref(), rule, &set, bp, &view, now);
    }
    p.publish(json, p.note(format!("{what} for rule {rule:?}")), ann)
        .await
}

async fn do_canary(p: &Post<'_>) -> Response {
    let Ok(pct) = p.get("percent").trim().parse::<f64>() else {
        return refuse(StatusCode::BAD_REQUEST, "percent must be a number");
    };
    move_rule(p, Rollout::Canary(pct), format!("canary {pct}%")).await
}

async fn do_promote(p: &Post<'_>) -> Response {
    move_rule(p, Rollout::Block, "block for everyone".into()).await
}

async fn do_demote(p: &Post<'_>) -> Response {
    move_rule(p, Rollout::Log, "back to log".into()).await
}

async fn do_rollback(p: &Post<'_>) -> Response {
    let Ok(to) = p.get("to").parse::<u64>() else {
        return refuse(StatusCode::BAD_REQUEST, "to must be a version");
    };
    let history = match p
        .st
        .control
        .history(ratelimit_core::control::Published::HISTORY_LEN)
        .await
    {
        Ok(h) => h,
        Err(e) => return crate::routes::unavailable(e),
    };
    let Some(target) = history.iter().find(|v| v.version == to) else {
        return refuse(StatusCode::NOT_FOUND, "no such version in the history");
    };
    let (current, _, view) = match p.published().await {
        Ok(x) => x,
        Err(e) => return crate::routes::unavailable(e),
    };
    let ann = phases::carry(current.as_ref(), &target.json, &view, p.st.limiter.now_ms());
    p.publish(
        target.json.clone(),
        p.note(format!("rollback to version {to}")),
        ann,
    )
    .await
}

fn refuse_owned(status: StatusCode, why: String) -> Response {
    use axum::response::IntoResponse;
    tracing::warn!(target: "ratelimit_admin", status = status.as_u16(), why = %why, "admin action refused");
    (
        status,
        crate::routes::headers("text/plain; charset=utf-8"),
        format!("{why}\n"),
    )
        .into_response()
}
