//! The fleet's registry: each instance's report, kept for [`LIVE_FOR`]
//! after it was written, indexed by Valkey's time.

use ratelimit_core::control::{ControlError, InstanceReport};

use super::codec::{report_from_json, report_to_json};
use super::{ValkeyControl, LIVE_FOR};

/// Reports larger than this are not read back (a hand-written value).
const MAX_REPORT_BYTES: usize = 256 * 1024;

fn live_ms() -> String {
    LIVE_FOR.as_millis().to_string()
}

impl ValkeyControl {
    /// Writes `report` to the registry, to expire after [`LIVE_FOR`];
    /// returns how many instances reported within it.
    pub(crate) async fn write_report(&self, report: &InstanceReport) -> Result<u64, ControlError> {
        let key = format!("{}{}", self.keys.instance, report.id);
        let keys = [self.keys.instances.as_str(), key.as_str()];
        let (json, ttl) = (report_to_json(report), live_ms());
        let args: [&[u8]; 3] = [report.id.as_bytes(), json.as_bytes(), ttl.as_bytes()];
        self.conn.script(&self.scripts.report, &keys, &args).await
    }

    /// The reports of the instances seen within [`LIVE_FOR`], by id; a
    /// malformed report is skipped with a warning. An index that holds
    /// another type than a sorted set is an `Invalid` error naming it.
    pub(crate) async fn live_reports(&self) -> Result<Vec<InstanceReport>, ControlError> {
        let keys = [self.keys.instances.as_str()];
        let ttl = live_ms();
        let ids: Vec<String> = match self
            .conn
            .script(&self.scripts.live, &keys, &[ttl.as_bytes()])
            .await
        {
            Ok(ids) => ids,
            Err(e) => return Err(self.name_key(e, self.keys.expect_instances()).await),
        };
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut cmd = redis::cmd("MGET");
        for id in &ids {
            cmd.arg(format!("{}{id}", self.keys.instance));
        }
        let values: Vec<Option<String>> = self.conn.cmd(&cmd).await?;
        let mut out = Vec::with_capacity(ids.len());
        for (id, v) in ids.iter().zip(values) {
            let Some(v) = v else { continue };
            if v.len() > MAX_REPORT_BYTES {
                tracing::warn!(instance = %id, bytes = v.len(), "an oversized registry report is skipped");
                continue;
            }
            match report_from_json(&v) {
                Ok(r) => out.push(r),
                Err(e) => {
                    tracing::warn!(instance = %id, error = %e, "a malformed registry report is skipped")
                }
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }
}
