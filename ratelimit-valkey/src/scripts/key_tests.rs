//! Tests of the Valkey key names (`key_of`) and their encoding.

#[test]
fn base64url_encodes_like_the_rfc() {
    let enc = |b: &[u8]| {
        let mut s = String::new();
        super::base64url(b, &mut s);
        s
    };
    assert_eq!(enc(b""), "");
    assert_eq!(enc(b"f"), "Zg");
    assert_eq!(enc(b"fo"), "Zm8");
    assert_eq!(enc(b"foo"), "Zm9v");
    assert_eq!(enc(b"foobar"), "Zm9vYmFy");
    assert_eq!(enc(&[0xfb, 0xff]), "-_8");
}

/// Keys recorded before base64url moved to the `base64` crate: live
/// counters are stored under them.
#[test]
fn keys_are_the_recorded_ones() {
    use std::sync::Arc;
    use std::time::Duration;

    use ratelimit_core::backend::namespace;
    use ratelimit_core::backend::Check;
    use ratelimit_core::rules::RuleBuilder;
    use ratelimit_core::HashKey;

    let key = |id: &str, ip: &[u8]| {
        let rule = RuleBuilder::new(id)
            .key(["ip"])
            .fixed_window(5, Duration::from_secs(60))
            .build()
            .expect("rule");
        let rule = Arc::new(rule);
        let check = Check::new(
            rule.clone(),
            namespace(&rule).into(),
            HashKey::DEFAULT.digest(ip),
            rule.quota(1),
            None,
            None,
        );
        super::key_of("rl:", &check)
    };
    let recorded = [
        ("api", &b"203.0.113.7"[..], "rl:{HFsaY4CNi7y07b0Y}SgnxfA"),
        ("login", &b"198.51.100.1"[..], "rl:{24qOiIXLtwl_LDnV}NElrzQ"),
        ("api", &b""[..], "rl:{-kkuG4VwGZxChnYH}SgnxfA"),
    ];
    for (id, ip, k) in recorded {
        assert_eq!(key(id, ip), k);
        assert_eq!(k.len(), 27);
    }
}
