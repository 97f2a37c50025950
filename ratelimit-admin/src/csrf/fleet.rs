//! The fleet's CSRF secret as one admin page keeps it.
//!
//! The secret lives in the control (`Control::csrf_secret`: for a fleet, a
//! key in Valkey, created by the first instance to ask). A Valkey restarted
//! without persistence loses it, and the next instance to ask creates
//! another: a page that kept the old one would render forms no other
//! instance accepts. So a page reads the secret on every render (one call,
//! beside the fleet's view it reads anyway), and a token that fails
//! against the last secret read is checked again after reading it anew.
//! While the control does not answer, the last secret read is used.

use std::sync::Mutex;

use ratelimit_core::control::{Control, ControlError};

use super::Csrf;

/// The last secret read from the control.
#[derive(Debug, Default)]
pub(crate) struct FleetCsrf {
    last: Mutex<Option<Csrf>>,
}

impl FleetCsrf {
    fn last(&self) -> Option<Csrf> {
        self.last.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The secret read now, kept as the last one.
    async fn read(&self, control: &dyn Control) -> Result<Csrf, ControlError> {
        let csrf = Csrf::from_secret(&control.csrf_secret().await?);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(csrf.clone());
        Ok(csrf)
    }

    /// The tokens to render a page with: the fleet's secret as read now,
    /// or the last one read while the control does not answer.
    ///
    /// # Errors
    ///
    /// The control's, when it does not answer and no secret was read yet.
    pub(crate) async fn for_render(&self, control: &dyn Control) -> Result<Csrf, ControlError> {
        match self.read(control).await {
            Ok(csrf) => Ok(csrf),
            Err(e) => self.last().ok_or(e),
        }
    }

    /// Whether `token` is the token of `nonce` under the fleet's secret:
    /// the last one read, else (a token of the right shape only) the one
    /// read now.
    pub(crate) async fn verify(&self, control: &dyn Control, nonce: &str, token: &str) -> bool {
        if self.last().is_some_and(|c| c.verify(nonce, token)) {
            return true;
        }
        if !Csrf::well_formed(nonce, token) {
            return false;
        }
        match self.read(control).await {
            Ok(csrf) => csrf.verify(nonce, token),
            Err(e) => {
                tracing::debug!(target: "ratelimit_admin", error = %e, "admin: the CSRF secret could not be read again");
                false
            }
        }
    }
}
