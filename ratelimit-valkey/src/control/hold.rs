//! The schema hold before a publish: while a live instance reads an older
//! schema than the set needs, the publish waits.
//!
//! A registry that cannot be read because its key holds another type does
//! not hold the publish: any user that may write the registry (every
//! follower) could otherwise stop every publish. The publish goes on,
//! logged with the key's name; an instance of an older build still refuses
//! a set it cannot read, and says so in its report.

use ratelimit_core::control::{ControlError, Published};

use super::ValkeyControl;

impl ValkeyControl {
    /// `Err(Held)` while a live instance reads an older schema than this
    /// build's; `Ok` when none does, or when the registry holds another
    /// type (logged, naming the key).
    pub(crate) async fn hold_for_older_schemas(&self) -> Result<(), ControlError> {
        let reports = match self.live_reports().await {
            Ok(reports) => reports,
            Err(ControlError::Invalid(why)) => {
                tracing::warn!(
                    reason = %why,
                    "control: publishing without the schema hold: the registry cannot be read (delete the key; instances write it again at their next report)"
                );
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let older: Vec<(String, u32)> = reports
            .iter()
            .filter(|r| r.schema < Published::SCHEMA)
            .map(|r| (r.id.clone(), r.schema))
            .collect();
        if older.is_empty() {
            return Ok(());
        }
        Err(ControlError::Held {
            needs_schema: Published::SCHEMA,
            instances: older,
        })
    }
}
