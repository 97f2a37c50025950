//! The routes: the page, its JSON, the rule set export, and the two
//! actions (POST, CSRF-checked, logged).

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{OriginalUri, State};
use axum::response::{IntoResponse, Response};
use axum::Form;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION, SET_COOKIE};
use http::{HeaderMap, HeaderValue, StatusCode, Uri};
use ratelimit_core::control::{Control, ControlError, Switch};
use ratelimit_core::Limiter;

use crate::csrf::{self, Csrf};
use crate::html::{self, Draft};
use crate::snapshot::{parse_subject, Snapshot};

/// The shared state of the routes.
#[derive(Debug)]
pub(crate) struct AdminState {
    pub(crate) limiter: Limiter,
    /// Every action goes through it, so that it applies fleet-wide.
    pub(crate) control: Arc<dyn Control>,
    /// Keyed with the fleet's secret (`Control::csrf_secret`), read on
    /// every render and when a token fails against the last one read.
    pub(crate) csrf: csrf::FleetCsrf,
    pub(crate) secure_cookie: bool,
}

pub(crate) type Shared = State<Arc<AdminState>>;

/// The path the router is mounted at: the original path less the path the
/// router saw (`/admin` for `/admin/` nested at `/admin`; empty at the root).
fn base_of(original: &Uri, seen: &Uri) -> String {
    let orig = original.path();
    let base = orig.strip_suffix(seen.path()).unwrap_or(orig);
    base.trim_end_matches('/').to_owned()
}

const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'self'";

pub(crate) fn headers(content_type: &'static str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h
}

/// `GET /`: the page. Sets the CSRF cookie when the request has none.
pub(crate) async fn page(
    State(st): Shared,
    OriginalUri(original): OriginalUri,
    uri: Uri,
    req_headers: HeaderMap,
) -> Response {
    render(&st, &original, &uri, &req_headers, None, StatusCode::OK).await
}

/// The page, with `draft` (a draft being checked, or an action's answer)
/// when there is one, answered with `status`.
pub(crate) async fn render(
    st: &AdminState,
    original: &Uri,
    uri: &Uri,
    req_headers: &HeaderMap,
    draft: Option<Draft>,
    status: StatusCode,
) -> Response {
    let base = base_of(original, uri);
    let csrf = match st.csrf.for_render(st.control.as_ref()).await {
        Ok(c) => c,
        Err(e) => return unavailable(e),
    };
    let existing = csrf::nonce_of(req_headers).filter(|n| n.len() == 32);
    let nonce = existing.clone().unwrap_or_else(Csrf::nonce);
    let snapshot = Snapshot::read(&st.limiter).await;
    let fleet = crate::fleet::Fleet::read(st.control.as_ref()).await;
    let body = html::page(
        &snapshot,
        &fleet,
        draft.as_ref(),
        &base,
        &csrf.token(&nonce),
    );
    let mut h = headers("text/html; charset=utf-8");
    h.insert("content-security-policy", HeaderValue::from_static(CSP));
    if existing.is_none() {
        let cookie = csrf::set_cookie(&nonce, &base, st.secure_cookie);
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            h.insert(SET_COOKIE, v);
        }
    }
    (status, h, body).into_response()
}

/// 503: the control did not answer.
pub(crate) fn unavailable(e: ControlError) -> Response {
    tracing::warn!(target: "ratelimit_admin", error = %e, "admin: the control did not answer");
    (
        StatusCode::SERVICE_UNAVAILABLE,
        headers("text/plain; charset=utf-8"),
        format!("{e}\n"),
    )
        .into_response()
}

/// `GET /state.json`: what the page shows.
pub(crate) async fn state_json(State(st): Shared) -> Response {
    let snapshot = Snapshot::read(&st.limiter).await;
    (
        headers("application/json"),
        format!("{:#}", snapshot.to_json()),
    )
        .into_response()
}

/// `GET /rules.json`: the running rule set, in the format that loads.
pub(crate) async fn rules_json(State(st): Shared) -> Response {
    (headers("application/json"), st.limiter.rules().to_json()).into_response()
}

pub(crate) type Fields = Vec<(String, String)>;

pub(crate) fn field<'a>(form: &'a Fields, name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

pub(crate) fn refuse(status: StatusCode, why: &'static str) -> Response {
    tracing::warn!(target: "ratelimit_admin", status = status.as_u16(), why, "admin action refused");
    (
        status,
        headers("text/plain; charset=utf-8"),
        format!("{why}\n"),
    )
        .into_response()
}

/// Whether the form's token matches the cookie, under the fleet's
/// secret: a form rendered by one instance posts back to any other.
pub(crate) async fn csrf_ok(st: &AdminState, req_headers: &HeaderMap, form: &Fields) -> bool {
    match (csrf::nonce_of(req_headers), field(form, csrf::FIELD)) {
        (Some(nonce), Some(token)) => st.csrf.verify(st.control.as_ref(), &nonce, token).await,
        _ => false,
    }
}

/// The page's own path under `base`: `base` itself (axum serves a nested
/// router's `/` at `/admin`, not at `/admin/`), or `/` at the root.
pub(crate) fn home(base: &str) -> &str {
    if base.is_empty() {
        "/"
    } else {
        base
    }
}

/// Back to the page (303: the browser GETs it).
pub(crate) fn back(original: &Uri, seen: &Uri) -> Response {
    let base = base_of(original, seen);
    let to = home(&base);
    let mut h = headers("text/plain; charset=utf-8");
    if let Ok(v) = HeaderValue::from_str(to) {
        h.insert(LOCATION, v);
    }
    (StatusCode::SEE_OTHER, h, "done\n").into_response()
}

/// `POST /reset` (`rule`, `subject`): lifts a penalty and forgets the
/// subject's count under the rule, on every instance (`Control::lift`).
pub(crate) async fn reset(
    State(st): Shared,
    OriginalUri(original): OriginalUri,
    uri: Uri,
    req_headers: HeaderMap,
    form: Result<Form<Fields>, FormRejection>,
) -> Response {
    let form = form.map(|Form(f)| f).unwrap_or_default();
    if !csrf_ok(&st, &req_headers, &form).await {
        return refuse(StatusCode::FORBIDDEN, "missing or wrong CSRF token");
    }
    let (Some(rule), Some(subject)) = (
        field(&form, "rule"),
        field(&form, "subject").and_then(parse_subject),
    ) else {
        return refuse(StatusCode::BAD_REQUEST, "need a rule and a subject digest");
    };
    match st.control.lift(rule, subject).await {
        Ok(()) => {
            tracing::info!(target: "ratelimit_admin", rule, subject = %subject, "admin: penalty lifted, subject reset");
            back(&original, &uri)
        }
        Err(e) => {
            tracing::warn!(target: "ratelimit_admin", rule, subject = %subject, error = %e, "admin: reset failed");
            let status = match e {
                ControlError::Invalid(_) => StatusCode::NOT_FOUND,
                _ => StatusCode::BAD_GATEWAY,
            };
            (
                status,
                headers("text/plain; charset=utf-8"),
                format!("{e}\n"),
            )
                .into_response()
        }
    }
}

/// `POST /switch` (`switch`, `on`): flips an emergency switch.
pub(crate) async fn switch(
    State(st): Shared,
    OriginalUri(original): OriginalUri,
    uri: Uri,
    req_headers: HeaderMap,
    form: Result<Form<Fields>, FormRejection>,
) -> Response {
    let form = form.map(|Form(f)| f).unwrap_or_default();
    if !csrf_ok(&st, &req_headers, &form).await {
        return refuse(StatusCode::FORBIDDEN, "missing or wrong CSRF token");
    }
    let on = match field(&form, "on") {
        Some("true") => true,
        Some("false") => false,
        _ => return refuse(StatusCode::BAD_REQUEST, "on must be true or false"),
    };
    let Some(switch) = field(&form, "switch").and_then(Switch::from_name) else {
        return refuse(StatusCode::BAD_REQUEST, "unknown switch");
    };
    let name = switch.name();
    let was = ratelimit_core::control::SwitchState::of(st.limiter.switches()).get(switch);
    if let Err(e) = st.control.set_switch(switch, on).await {
        return unavailable(e);
    }
    tracing::info!(target: "ratelimit_admin", switch = name, from = was, to = on, "admin: switch flipped");
    back(&original, &uri)
}

/// `POST /remove_temporary` (`rule`): removes a rule added at run time
/// from every instance.
pub(crate) async fn remove_temporary(
    State(st): Shared,
    OriginalUri(original): OriginalUri,
    uri: Uri,
    req_headers: HeaderMap,
    form: Result<Form<Fields>, FormRejection>,
) -> Response {
    let form = form.map(|Form(f)| f).unwrap_or_default();
    if !csrf_ok(&st, &req_headers, &form).await {
        return refuse(StatusCode::FORBIDDEN, "missing or wrong CSRF token");
    }
    let Some(rule) = field(&form, "rule") else {
        return refuse(StatusCode::BAD_REQUEST, "rule is required");
    };
    match st.control.remove_temporary(rule).await {
        Ok(true) => {}
        Ok(false) => {
            return refuse(
                StatusCode::NOT_FOUND,
                "no rule added at run time by that id",
            )
        }
        Err(e) => return unavailable(e),
    }
    tracing::info!(target: "ratelimit_admin", rule, "admin: rule added at run time removed");
    back(&original, &uri)
}

#[cfg(test)]
mod tests;
