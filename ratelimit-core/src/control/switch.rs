//! The switches a fleet shares, as the control stores and shows them.

use crate::switches::Switches;

/// One of the emergency switches ([`Switches`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Switch {
    /// The kill switch: every rule acts as `log`.
    DisableRateLimiting,
    /// The published rules' `block` acts as `log`.
    DisableConfigBlocking,
    /// Every JWT claim counts as missing.
    DisableJwt,
}

impl Switch {
    /// Every switch.
    pub const ALL: [Switch; 3] = [
        Switch::DisableRateLimiting,
        Switch::DisableConfigBlocking,
        Switch::DisableJwt,
    ];

    /// Its name, as stored and shown: `disable_rate_limiting`, ...
    pub fn name(self) -> &'static str {
        match self {
            Switch::DisableRateLimiting => "disable_rate_limiting",
            Switch::DisableConfigBlocking => "disable_config_blocking",
            Switch::DisableJwt => "disable_jwt",
        }
    }

    /// The switch named `name`.
    pub fn from_name(name: &str) -> Option<Switch> {
        Switch::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// The state of every switch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SwitchState {
    /// [`Switch::DisableRateLimiting`].
    pub disable_rate_limiting: bool,
    /// [`Switch::DisableConfigBlocking`].
    pub disable_config_blocking: bool,
    /// [`Switch::DisableJwt`].
    pub disable_jwt: bool,
}

impl SwitchState {
    /// The state of `switches` now.
    pub fn of(switches: &Switches) -> Self {
        Self {
            disable_rate_limiting: switches.rate_limiting_disabled(),
            disable_config_blocking: switches.config_blocking_disabled(),
            disable_jwt: switches.jwt_disabled(),
        }
    }

    /// Sets `switches` to this state.
    pub fn apply_to(&self, switches: &Switches) {
        switches.set_disable_rate_limiting(self.disable_rate_limiting);
        switches.set_disable_config_blocking(self.disable_config_blocking);
        switches.set_disable_jwt(self.disable_jwt);
    }

    /// Whether `switch` is on.
    pub fn get(&self, switch: Switch) -> bool {
        match switch {
            Switch::DisableRateLimiting => self.disable_rate_limiting,
            Switch::DisableConfigBlocking => self.disable_config_blocking,
            Switch::DisableJwt => self.disable_jwt,
        }
    }

    /// Turns `switch` on or off.
    pub fn set(&mut self, switch: Switch, on: bool) {
        match switch {
            Switch::DisableRateLimiting => self.disable_rate_limiting = on,
            Switch::DisableConfigBlocking => self.disable_config_blocking = on,
            Switch::DisableJwt => self.disable_jwt = on,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_names_round_trip() {
        for s in Switch::ALL {
            assert_eq!(Switch::from_name(s.name()), Some(s));
        }
        assert_eq!(Switch::from_name("nope"), None);
    }
}
