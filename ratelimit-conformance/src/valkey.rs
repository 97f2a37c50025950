//! Playing cases on the Valkey backend: a real `valkey-server` (spawned, or
//! `VALKEY_URL`), reached through a proxy the runner controls so that
//! `"valkey": "down"` makes it unreachable, with the limiter's time
//! injected into the scripts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ratelimit_core::control::StaticFleet;
use ratelimit_core::{Limiter, ManualClock};
use ratelimit_testkit::valkey::{ChaosProxy, ProxyMode, ValkeyServer};
use ratelimit_valkey::ValkeyBackend;

use crate::harness::Toggle;
use crate::{check_invalid, play_via, rule_set, to_verdict, Case, Verdict, Via, ORIGIN_MS};

/// A Valkey server for a run of cases.
#[derive(Debug)]
pub struct ValkeyEnv {
    server: ValkeyServer,
    run: u64,
    cases: AtomicU64,
}

impl ValkeyEnv {
    /// Uses `VALKEY_URL`, or spawns a `valkey-server`.
    ///
    /// # Errors
    ///
    /// No server can be had: the message says how to get one.
    pub fn start() -> Result<Self, String> {
        let server = ValkeyServer::start()?;
        let run = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Ok(Self {
            server,
            run,
            cases: AtomicU64::new(0),
        })
    }

    /// Plays `case` on Valkey through `via`.
    pub async fn run(&self, case: &Case, via: Via) -> Verdict {
        if !case.applies_to("valkey") {
            return Verdict::Skipped(format!(
                "backends {:?}",
                case.backends.clone().unwrap_or_default()
            ));
        }
        if case.expect_invalid == Some(true) {
            return to_verdict(check_invalid(case));
        }
        let rules = match rule_set(case) {
            Ok(r) => r,
            Err(e) => return Verdict::Failed(format!("rules refused: {e}")),
        };
        let proxy = match ChaosProxy::start(host_port(self.server.url())).await {
            Ok(p) => Arc::new(p),
            Err(e) => return Verdict::Failed(format!("proxy: {e}")),
        };
        let count = match case.instance_count() {
            Ok(n) => n,
            Err(e) => return Verdict::Failed(e),
        };
        // Every case gets keys of its own, on a shared server; its
        // instances share them.
        let n = self.cases.fetch_add(1, Ordering::Relaxed);
        let clock = ManualClock::new(ORIGIN_MS);
        let mut limiters = Vec::with_capacity(count);
        for _ in 0..count {
            let backend = ValkeyBackend::builder(proxy.url())
                .key_prefix(format!("conf:{}:{n}:", self.run))
                .injected_time(true)
                .build()
                .await;
            let backend = match backend {
                Ok(b) => b,
                Err(e) => return Verdict::Failed(format!("valkey backend: {e}")),
            };
            limiters.push(
                Limiter::builder(rules.clone())
                    .clock(clock.clone())
                    .backend(backend)
                    .fleet_size(StaticFleet(case.fleet_size.unwrap_or(1)))
                    .build(),
            );
        }
        let toggle: Toggle = Box::new(move |up| {
            proxy.set_mode(if up { ProxyMode::Pass } else { ProxyMode::Down });
            Ok(())
        });
        play_via(case, limiters, clock, Some(toggle), via).await
    }
}

/// `host:port` of a `redis://` / `valkey://` URL (credentials and database
/// dropped).
fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest).to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_port_of_urls() {
        assert_eq!(super::host_port("redis://127.0.0.1:6379"), "127.0.0.1:6379");
        assert_eq!(super::host_port("valkey://u:p@h:1/0"), "h:1");
    }
}
