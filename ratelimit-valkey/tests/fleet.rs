//! The live fleet count: instances announce themselves; the count is read
//! into an `Arc<AtomicU64>` fleet size, kept while Valkey is down.

use std::time::Duration;

use ratelimit_core::control::FleetSize;
use ratelimit_testkit::unique;
use ratelimit_testkit::valkey::{ChaosProxy, ProxyMode, ValkeyServer};
use ratelimit_valkey::{FleetConfig, ValkeyBackend};

async fn wait_for(fleet: &dyn FleetSize, n: u64) {
    for _ in 0..100 {
        if fleet.fleet_size() == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(fleet.fleet_size(), n);
}

#[tokio::test]
async fn instances_are_counted_and_the_last_count_survives_an_outage() {
    let server = ValkeyServer::spawn().unwrap_or_else(|e| panic!("{e}"));
    let proxy = ChaosProxy::start(format!("127.0.0.1:{}", server.port().expect("port")))
        .await
        .expect("proxy");
    let prefix = unique("f");
    let backend = |url: String| {
        let prefix = prefix.clone();
        async move {
            ValkeyBackend::builder(url)
                .key_prefix(prefix)
                .build()
                .await
                .expect("backend")
        }
    };
    let (a, b, c) = (
        backend(proxy.url()).await,
        backend(server.url().to_string()).await,
        backend(server.url().to_string()).await,
    );
    let config = |name: &str| FleetConfig::new(name, 7).refresh(Duration::from_millis(50));
    let fa = a.live_fleet(config("a"));
    assert_eq!(
        fa.shared().fleet_size(),
        7,
        "expected count until Valkey answers"
    );
    let _fb = b.live_fleet(config("b"));
    let _fc = c.live_fleet(config("c"));
    wait_for(&fa.shared(), 3).await;

    proxy.set_mode(ProxyMode::Down);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(fa.shared().fleet_size(), 3, "kept while Valkey is down");
}
