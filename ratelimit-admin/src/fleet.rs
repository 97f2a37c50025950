//! What the page shows of the fleet, read through the [`Control`]: the
//! published version and its history, and the instances with what each
//! runs.

use ratelimit_core::control::{Control, FleetView, Published};

use crate::snapshot::{Snapshot, TopRow};

/// A rule that would have limited requests, with the clients it would hit.
#[derive(Debug)]
pub(crate) struct Attention {
    pub(crate) id: String,
    pub(crate) would_limit: u64,
    pub(crate) top: Vec<TopRow>,
}

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
        let history = control
            .history(Published::HISTORY_LEN)
            .await
            .unwrap_or_default();
        Self { view, history }
    }

    /// The published version (with its rule set), if any.
    pub(crate) fn current(&self) -> Option<&Published> {
        self.history.first()
    }

    /// The rules that would have limited requests, summed over the fleet
    /// (the instances' reports) when the control answered, else this
    /// instance's counts.
    pub(crate) fn attention(&self, s: &Snapshot) -> Vec<Attention> {
        let Some(view) = self.view.as_ref().ok().filter(|v| !v.instances.is_empty()) else {
            return s
                .needs_attention()
                .map(|r| Attention {
                    id: r.id.clone(),
                    would_limit: r.would_limit(),
                    top: r.top.clone(),
                })
                .collect();
        };
        view.rule_totals()
            .into_iter()
            .filter(|c| c.would_limit > 0)
            .map(|c| Attention {
                top: view
                    .top_subjects(&c.rule)
                    .into_iter()
                    .map(|t| TopRow {
                        label: t.label,
                        subject: t.subject,
                        count: t.count,
                    })
                    .collect(),
                id: c.rule,
                would_limit: c.would_limit,
            })
            .collect()
    }

    /// The version a form starts from (compare-and-set): 0 when nothing
    /// was published.
    pub(crate) fn version(&self) -> u64 {
        self.current().map_or(0, |p| p.version)
    }
}
