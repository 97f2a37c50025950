use super::base_of;

#[test]
fn the_base_is_the_mount_path() {
    let b = |o: &str, s: &str| base_of(&o.parse().unwrap(), &s.parse().unwrap());
    assert_eq!(b("/admin", "/"), "/admin");
    assert_eq!(b("/admin/", "/"), "/admin");
    assert_eq!(b("/ops/rl/reset", "/reset"), "/ops/rl");
    assert_eq!(b("/", "/"), "");
    assert_eq!(b("/state.json", "/state.json"), "");
}
