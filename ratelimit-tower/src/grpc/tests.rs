use super::*;

fn headers(ct: &'static str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(ct));
    h
}

#[test]
fn grpc_content_types_are_told_from_others() {
    for ct in [
        "application/grpc",
        "application/grpc+proto",
        "application/grpc;charset=utf-8",
        "Application/GRPC",
    ] {
        assert!(is_grpc(&headers(ct)), "{ct}");
    }
    for ct in [
        "application/grpc-web",
        "application/grpcx",
        "application/json",
        "text/grpc",
    ] {
        assert!(!is_grpc(&headers(ct)), "{ct}");
    }
    assert!(!is_grpc(&HeaderMap::new()));
}

fn answer(status: u16, ct: &'static str, body: &'static str) -> Response<Bytes> {
    let mut res = Response::new(Bytes::from_static(body.as_bytes()));
    *res.status_mut() = StatusCode::from_u16(status).unwrap();
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(ct));
    res.headers_mut()
        .insert("ratelimit", HeaderValue::from_static("\"a\";r=0;t=5"));
    res
}

#[test]
fn each_answer_maps_to_its_documented_code() {
    let json = "application/json";
    for (status, limited, code) in [
        (429, LimitedCode::ResourceExhausted, "8"),
        (429, LimitedCode::Unavailable, "14"),
        (503, LimitedCode::ResourceExhausted, "14"),
        (400, LimitedCode::ResourceExhausted, "3"),
        (414, LimitedCode::ResourceExhausted, "3"),
        (431, LimitedCode::ResourceExhausted, "3"),
        (500, LimitedCode::ResourceExhausted, "13"),
        (403, LimitedCode::ResourceExhausted, "7"),
        (418, LimitedCode::ResourceExhausted, "2"),
    ] {
        let res = to_grpc(answer(status, json, "{}"), None, limited);
        assert_eq!(res.status(), 200, "{status}");
        assert_eq!(res.headers()[GRPC_STATUS], code, "{status}");
        assert_eq!(res.headers()[CONTENT_TYPE], "application/grpc");
        assert_eq!(res.headers()["ratelimit"], "\"a\";r=0;t=5", "metadata kept");
        assert!(res.body().is_empty(), "trailers-only: no body");
        assert!(!res.headers().contains_key(GRPC_RETRY_PUSHBACK_MS));
    }
}

#[test]
fn a_limited_answer_carries_the_pushback() {
    let res = to_grpc(
        answer(429, "application/json", "{}"),
        Some(1500),
        LimitedCode::default(),
    );
    assert_eq!(res.headers()[GRPC_RETRY_PUSHBACK_MS], "1500");
    assert_eq!(res.headers()[GRPC_MESSAGE], "rate limited");
    #[cfg(feature = "tonic")]
    assert!(res.headers().contains_key(GRPC_STATUS_DETAILS_BIN));
}

#[test]
fn a_text_body_becomes_the_percent_encoded_message() {
    let res = to_grpc(
        answer(500, "text/plain; charset=utf-8", "use `ClientIp` – 100%\n"),
        None,
        LimitedCode::default(),
    );
    assert_eq!(
        res.headers()[GRPC_MESSAGE],
        "use `ClientIp` %E2%80%93 100%25"
    );
}

#[test]
fn an_answer_already_in_grpc_is_left_alone() {
    let mut res = answer(200, "application/grpc", "");
    res.headers_mut()
        .insert(GRPC_STATUS, HeaderValue::from_static("9"));
    let res = to_grpc(res, Some(10), LimitedCode::default());
    assert_eq!(res.headers()[GRPC_STATUS], "9");
    assert!(!res.headers().contains_key(GRPC_RETRY_PUSHBACK_MS));
}

#[test]
fn a_trailers_only_grpc_error_counts_as_its_http_status() {
    for (code, want) in [
        ("0", 200),
        ("5", 404),
        ("13", 500),
        ("8", 429),
        ("16", 401),
        ("x", 500),
    ] {
        let mut res = answer(200, "application/grpc", "");
        res.headers_mut()
            .insert(GRPC_STATUS, HeaderValue::from_static(code));
        assert_eq!(counted_status(&res), want, "{code}");
    }
    assert_eq!(counted_status(&answer(200, "application/grpc", "")), 200);
    assert_eq!(counted_status(&answer(404, "text/plain", "")), 404);
}

#[test]
fn control_bytes_never_reach_the_header() {
    let v = percent_encode("a\r\nb\0c");
    assert_eq!(v, "a%0D%0Ab%00c");
}
