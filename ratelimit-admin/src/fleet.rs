//! What the page shows of the fleet, read through the [`Control`]: the
//! published version and its history, and the instances with what each
//! runs.

use ratelimit_core::control::{Control, FleetView, Published, HISTORY_LEN};

/// The fleet as the page shows it.
#[derive(Debug)]
pub(crate) struct Fleet {
    /// The instances seen in the last minute (or why the control did not
    /// answer).
    pub(crate) view: Result<FleetView, String>,
    /// The published versions, newest first.
    pub(crate) history: Vec<Published>,
}

impl Fleet {
    /// Reads `control`; a control that does not answer shows as such.
    pub(crate) async fn read(control: &dyn Control) -> Self {
        let view = control.fleet().await.map_err(|e| e.to_string());
        let history = control.history(HISTORY_LEN).await.unwrap_or_default();
        Self { view, history }
    }

    /// The published version (with its rule set), if any.
    pub(crate) fn current(&self) -> Option<&Published> {
        self.history.first()
    }

    /// The version a form starts from (compare-and-set): 0 when nothing
    /// was published.
    pub(crate) fn version(&self) -> u64 {
        self.current().map_or(0, |p| p.version)
    }
}
