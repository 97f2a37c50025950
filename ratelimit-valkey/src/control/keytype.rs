//! What each control key holds, and the error that names a key holding
//! something else (written by hand, or by a user the ACL let write it):
//! the operator is sent to the key, never to "Valkey does not answer".

use ratelimit_core::control::ControlError;

use super::scripts::Keys;
use super::ValkeyControl;

/// The error code a script answers when a key it was given holds another
/// type (checked before its first write, so it wrote nothing).
pub(crate) const CODE: &str = "CONTROLKEY";

/// A control key and what it should hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Expect<'a> {
    pub(crate) key: &'a str,
    /// Valkey's name of the type (`TYPE`): `hash`, `list`, `zset`, `string`.
    pub(crate) kind: &'static str,
    /// What the key is, for the operator.
    pub(crate) what: &'static str,
}

impl Expect<'_> {
    /// The sentence naming the key, what it holds and what it should.
    pub(crate) fn holds(&self, holds: &str) -> String {
        format!(
            "the control key {} holds a {holds} where it should hold a {} ({})",
            self.key, self.kind, self.what
        )
    }
}

impl Keys {
    /// The published set.
    pub(crate) fn expect_set(&self) -> Expect<'_> {
        Expect {
            key: &self.set,
            kind: "hash",
            what: "the published set",
        }
    }

    /// The switches.
    pub(crate) fn expect_switches(&self) -> Expect<'_> {
        Expect {
            key: &self.switches,
            kind: "hash",
            what: "the switches, each `1` or `0`",
        }
    }

    /// The registry's index of instances.
    pub(crate) fn expect_instances(&self) -> Expect<'_> {
        Expect {
            key: &self.instances,
            kind: "zset",
            what: "the registry: instance ids by report time",
        }
    }
}

/// The sentence of a script's [`CODE`] refusal, when `why` is one.
pub(crate) fn refusal_of(why: &str) -> Option<&str> {
    if !why.contains(CODE) {
        return None;
    }
    why.find("the control key").map(|i| why[i..].trim_end())
}

impl ValkeyControl {
    /// `e`, said of `expect.key`: a `WRONGTYPE` answer (or a script's
    /// [`CODE`] refusal) becomes [`ControlError::Invalid`] naming the key,
    /// the type it holds (read with `TYPE`) and the one it should hold.
    /// Any other error is returned as it is.
    pub(crate) async fn name_key(&self, e: ControlError, expect: Expect<'_>) -> ControlError {
        let ControlError::Unavailable(why) = &e else {
            return e;
        };
        if let Some(sentence) = refusal_of(why) {
            return ControlError::Invalid(sentence.to_owned());
        }
        if !why.contains("WRONGTYPE") {
            return e;
        }
        let holds: String = self
            .conn
            .cmd(redis::cmd("TYPE").arg(expect.key))
            .await
            .unwrap_or_else(|_| "value of another type".into());
        ControlError::Invalid(expect.holds(&holds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_read_from_the_script_error_and_nothing_else_is() {
        let e = Expect {
            key: "rl:control{ctl}:history",
            kind: "list",
            what: "the versions",
        };
        let said = format!("{CODE}: {} @user_script:9", e.holds("string"));
        assert_eq!(
            refusal_of(&said),
            Some("the control key rl:control{ctl}:history holds a string where it should hold a list (the versions) @user_script:9")
        );
        assert_eq!(refusal_of("WRONGTYPE the control key"), None);
    }
}
