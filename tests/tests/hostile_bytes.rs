//! Hostile bytes through the tower layer over real TCP, written byte for
//! byte with `tokio::net::TcpStream`: 64 KiB headers, invalid UTF-8 in
//! header values, the path and the query, thousands of repeated headers,
//! cookies and query arguments, 1 MiB JWT claims from a test auth layer.
//!
//! Each case checks the answer (the limiter still limits by the right key),
//! that the server is still up (nothing panicked), and that the limiter's
//! stores stay within their configured capacities
//! (`MemoryBackend::len()`, the penalty cache's `len()`); the site is
//! `ratelimit_tests::support::hostile`.
#![allow(clippy::print_stderr)]

use std::time::Instant;

use ratelimit_tests::support::hostile::*;
use ratelimit_tests::support::http::{exchange, get};
use ratelimit_tower::TrustedProxies;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_headers_are_answered_and_keyed_by_their_value() {
    let s = site(TrustedProxies::none(), Server::Axum).await;
    let a = header("x-tenant", &vec![b'a'; 64 * 1024]);
    let b = header("x-tenant", &vec![b'b'; 64 * 1024]);
    let filler = header("x-filler", &vec![b'f'; 64 * 1024]);
    // A 64 KiB header no rule reads is no matter.
    let small = header("x-tenant", b"small");
    assert_eq!(s.status(b"/h", &[&small, &filler]).await, 200);
    assert_eq!(s.status(b"/h", &[&small]).await, 429);
    // A value the rules read that is longer than 8 KiB is refused whole
    // (431, documented in `ratelimit_tower::extract`): the rules never
    // decide on a prefix of what the application sees.
    assert_eq!(s.status(b"/h", &[&a, &filler]).await, 431);
    assert_eq!(s.status(b"/h", &[&b]).await, 431);
    // The same for a 64 KiB cookie line.
    let mut cookie = b"sid=big; ".to_vec();
    cookie.extend(vec![b'k'; 64 * 1024]);
    assert_eq!(s.status(b"/c", &[&header("cookie", &cookie)]).await, 431);
    // A head larger than hyper accepts is refused by hyper (431 or a
    // closed connection), and the server keeps serving.
    let huge = header("x-tenant", &vec![b'z'; 1024 * 1024]);
    if let Ok(r) = exchange(s.addr, &get(b"/h", &[&huge])).await {
        assert!(r.status == 431 || r.status == 400, "{}", r.status);
    }
    s.assert_sound("huge headers").await;
    eprintln!(
        "hostile: 64 KiB header values refused (431); 1 MiB head refused by hyper; store {} subjects",
        s.memory.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_in_header_values_path_and_query() {
    let s = site(TrustedProxies::none(), Server::Axum).await;
    // Header values are keyed on their bytes.
    let ff = header("x-tenant", b"\xff\xfe");
    assert_eq!(s.status(b"/h", &[&ff]).await, 200);
    assert_eq!(s.status(b"/h", &[&ff]).await, 429);
    assert_eq!(
        s.status(b"/h", &[&header("x-tenant", b"\xff\xfd")]).await,
        200
    );
    assert_eq!(
        s.status(b"/h", &[&header("x-tenant", b"\xc3\x28\x80")])
            .await,
        200
    );
    // Invalid UTF-8 in a cookie line.
    let c = header("cookie", b"\x80=\xff; sid=\xc3\x28");
    assert_eq!(s.status(b"/c", &[&c]).await, 200);
    assert_eq!(s.status(b"/c", &[&c]).await, 429);
    // Percent-encoded invalid sequences in the query: answered, and the same
    // value is limited.
    for q in [
        &b"/q?a=%ff%fe"[..],
        b"/q?a=%c3%28",
        b"/q?a=%",
        b"/q?a=%f",
        b"/q?a=%zz",
    ] {
        assert_eq!(
            s.status(q, &[]).await,
            200,
            "{}",
            String::from_utf8_lossy(q)
        );
        assert_eq!(
            s.status(q, &[]).await,
            429,
            "{}",
            String::from_utf8_lossy(q)
        );
    }
    // ... and in the path (a distinct rule counting paths, limit 3).
    for p in [&b"/p/%ff%fe"[..], b"/p/%c0%af..%c0%af", b"/p/%00"] {
        assert_eq!(
            s.status(p, &[]).await,
            200,
            "{}",
            String::from_utf8_lossy(p)
        );
    }
    assert_eq!(s.status(b"/p/a-fourth-path", &[]).await, 429, "4 > 3 paths");
    // Raw bytes that are not UTF-8 in the request line: hyper refuses them
    // (400), the server survives.
    let raw = b"GET /p/\xff\xfe?a=\xff HTTP/1.1\r\nhost: x\r\n\r\n";
    if let Ok(r) = exchange(s.addr, raw).await {
        assert!(r.status == 400 || r.status == 200, "{}", r.status);
    }
    s.assert_sound("invalid utf-8").await;
}

/// BUG (reported): query values that are not UTF-8 once decoded are
/// counted as one. `RequestAttrs::query_arg` decodes lossily, so `%80`,
/// `%81`, ... all become U+FFFD: a `distinct_of: query:<name>` rule (the
/// `docs/rules.md`'s "an IP trying many account IDs") counts any number of such raw
/// values as one, and a `query:<name>` key part puts them in one bucket.
/// Header values and cookies are keyed on their bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_query_values_are_keyed_apart() {
    // The control: 5 different valid ids, limit 3 different ids per hour.
    let control = site(TrustedProxies::none(), Server::Axum).await;
    let mut got = Vec::new();
    for id in ["a", "b", "%C3%A9", "d", "e"] {
        got.push(
            control
                .status(format!("/ids?id={id}").as_bytes(), &[])
                .await,
        );
    }
    assert_eq!(got, vec![200, 200, 200, 429, 429], "valid ids");
    let s = site(TrustedProxies::none(), Server::Axum).await;
    // 5 different ids that are not UTF-8 once decoded.
    let mut got = Vec::new();
    for id in ["%80", "%81", "%82", "%83", "%84"] {
        got.push(s.status(format!("/ids?id={id}").as_bytes(), &[]).await);
    }
    assert_eq!(
        got,
        vec![200, 200, 200, 429, 429],
        "distinct_of query:id must count 5 different raw ids as 5, not 1"
    );
    assert_eq!(s.status(b"/q?a=%ff", &[]).await, 200);
    assert_eq!(
        s.status(b"/q?a=%fe", &[]).await,
        200,
        "a different raw value: its own bucket (headers are keyed on their bytes)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_repeated_headers_cookies_and_arguments() {
    let s = site(TrustedProxies::none(), Server::Roomy).await;
    let flood = |name: &str, first: &str, n: usize| -> Vec<Vec<u8>> {
        let mut v = vec![header(name, first.as_bytes())];
        v.extend((0..n).map(|i| header(name, format!("{i}").as_bytes())));
        v
    };
    let send = |target: &[u8], hs: Vec<Vec<u8>>| {
        let (s, target) = (&s, target.to_vec());
        async move {
            let refs: Vec<&[u8]> = hs.iter().map(Vec::as_slice).collect();
            s.status(&target, &refs).await
        }
    };
    // 5,000 x-tenant lines: the first one keys.
    assert_eq!(send(b"/h", flood("x-tenant", "one", 5_000)).await, 200);
    assert_eq!(send(b"/h", flood("x-tenant", "one", 5_000)).await, 429);
    assert_eq!(send(b"/h", flood("x-tenant", "two", 5_000)).await, 200);
    // Cookie lines are all read, within the copy bounds (256 values,
    // 64 KiB, 8 KiB each): 200 lines, sid in the first.
    let cookies = |first: &str, n: usize| -> Vec<Vec<u8>> {
        let mut v = vec![header("cookie", format!("sid={first}").as_bytes())];
        v.extend((0..n).map(|i| header("cookie", format!("sid=s{i}; c{i}=v").as_bytes())));
        v
    };
    assert_eq!(send(b"/c", cookies("one", 200)).await, 200);
    assert_eq!(send(b"/c", cookies("one", 200)).await, 429);
    assert_eq!(send(b"/c", cookies("two", 200)).await, 200);
    // One Cookie line of 500 pairs, sid first.
    let line = |first: &str, n: usize| {
        let mut l = format!("sid={first}");
        for i in 0..n {
            l.push_str(&format!("; k{i}=v{i}"));
        }
        vec![header("cookie", l.as_bytes())]
    };
    assert_eq!(send(b"/c", line("three", 500)).await, 200);
    assert_eq!(send(b"/c", line("three", 500)).await, 429);
    // Past the bounds the request is refused whole (431), so a sid hidden
    // behind 3,000 lines or 5,000 pairs cannot escape the rule.
    assert_eq!(send(b"/c", cookies("four", 5_000)).await, 431);
    assert_eq!(send(b"/c", line("five", 5_000)).await, 431);
    let hidden = |sid: &str| {
        let mut v: Vec<Vec<u8>> = (0..3_000)
            .map(|i| header("cookie", format!("k{i}=v").as_bytes()))
            .collect();
        v.push(header("cookie", format!("sid={sid}").as_bytes()));
        v
    };
    assert_eq!(send(b"/c", hidden("late-1")).await, 431);
    // 1,000 repeated query arguments (within the 16 KiB the rules read).
    let query = |first: &str, n: usize| -> Vec<u8> {
        let mut q = format!("/q?a={first}");
        for i in 0..n {
            q.push_str(&format!("&a={i}&b=%zz"));
        }
        q.into_bytes()
    };
    assert_eq!(send(&query("x", 1_000), Vec::new()).await, 200);
    assert_eq!(send(&query("x", 1_000), Vec::new()).await, 429);
    assert_eq!(send(&query("y", 1_000), Vec::new()).await, 200);
    // 4,000 (close to the 64 KiB a URI holds): refused whole (414).
    assert_eq!(send(&query("z", 4_000), Vec::new()).await, 414);
    s.assert_sound("repeats").await;
    eprintln!(
        "hostile: 5,000 header lines: first value keys; cookie and query floods past the \
         bounds refused (431, 414); store {} subjects",
        s.memory.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_jwt_claims_from_an_auth_layer() {
    let s = site(TrustedProxies::none(), Server::Axum).await;
    let before = s.memory.len();
    // Each claim is 1 MiB; A and B differ only in their last bytes.
    assert_eq!(s.status(b"/jwt", &[b"x-user: alice"]).await, 200);
    assert_eq!(s.status(b"/jwt", &[b"x-user: alice"]).await, 429);
    assert_eq!(s.status(b"/jwt", &[b"x-user: alicf"]).await, 200);
    assert_eq!(s.status(b"/jwt", &[b"x-user: bob"]).await, 200);
    // No verified token: the claim is missing, on_missing_key reject.
    assert_eq!(s.status(b"/jwt", &[]).await, 400);
    // Headers a client sends never become claims.
    assert_eq!(s.status(b"/jwt", &[b"x-jwt-sub: alice"]).await, 400);
    // Many requests with 1 MiB claims: one subject each, bounded.
    let started = Instant::now();
    for i in 0..50 {
        let h = format!("x-user: user{i}");
        assert_eq!(s.status(b"/jwt", &[h.as_bytes()]).await, 200);
    }
    assert_eq!(
        s.memory.len() - before,
        3 + 50,
        "one small state per subject"
    );
    s.assert_sound("jwt").await;
    eprintln!(
        "hostile: 1 MiB JWT claims (plus 1,000 others): keyed per subject, 50 in {:?}",
        started.elapsed()
    );
}
