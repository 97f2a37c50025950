//! Connections for management commands, and `INFO` readers.

use redis::aio::MultiplexedConnection;

/// A fresh multiplexed connection to `url` (management commands, not rate
/// limiting).
///
/// # Panics
///
/// When the URL is invalid or the server cannot be reached.
pub async fn connect(url: &str) -> MultiplexedConnection {
    redis::Client::open(url)
        .expect("valkey url")
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"))
}

/// `INFO <section>` over `conn`.
///
/// # Panics
///
/// When the command fails.
pub async fn info_of(conn: &mut MultiplexedConnection, section: &str) -> String {
    redis::cmd("INFO")
        .arg(section)
        .query_async(conn)
        .await
        .expect("INFO")
}

/// `INFO <section>` of the server at `url`, over a fresh connection.
pub async fn info(url: &str, section: &str) -> String {
    info_of(&mut connect(url).await, section).await
}

/// A `name:value` field of an `INFO` reply.
pub fn info_field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(|v| v.trim().to_string())
}

/// Field `field` (`calls`, `failed_calls`, `rejected_calls`) of `cmd`
/// (`evalsha`, ...) in an `INFO commandstats` reply; 0 when the command
/// never ran.
pub fn cmdstat(info: &str, cmd: &str, field: &str) -> u64 {
    let Some(line) = info_field(info, &format!("cmdstat_{cmd}")) else {
        return 0;
    };
    line.split(',')
        .find_map(|kv| kv.strip_prefix(&format!("{field}=")))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// How many `code` errors (`MOVED`, `ASK`, `TRYAGAIN`, ...) the server
/// at `url` replied (`INFO errorstats`); 0 when none.
pub async fn errors(url: &str, code: &str) -> u64 {
    let i = info(url, "errorstats").await;
    info_field(&i, &format!("errorstat_{code}"))
        .and_then(|v| v.strip_prefix("count=").and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// Field `field` of `cmd` in `INFO commandstats`, over `conn`.
pub async fn stat(conn: &mut MultiplexedConnection, cmd: &str, field: &str) -> u64 {
    cmdstat(&info_of(conn, "commandstats").await, cmd, field)
}

/// Calls of `cmd` the server received (NOSCRIPT replies included).
pub async fn calls(conn: &mut MultiplexedConnection, cmd: &str) -> u64 {
    stat(conn, cmd, "calls").await
}

/// Calls of `cmd` that ran (calls less failed ones, such as NOSCRIPT).
pub async fn ran(conn: &mut MultiplexedConnection, cmd: &str) -> u64 {
    calls(conn, cmd).await - stat(conn, cmd, "failed_calls").await
}

/// Scripts the servers at `urls` ran (`EVALSHA` calls less failed ones):
/// in a cluster, how many script calls reached a node and ran.
pub async fn scripts_run(urls: &[String]) -> u64 {
    let mut n = 0;
    for url in urls {
        let i = info(url, "commandstats").await;
        n += cmdstat(&i, "evalsha", "calls") - cmdstat(&i, "evalsha", "failed_calls");
    }
    n
}

/// `EVALSHA` calls the server at `url` received: (calls, failed, rejected).
pub async fn evalsha_stats(url: &str) -> (u64, u64, u64) {
    let i = info(url, "commandstats").await;
    (
        cmdstat(&i, "evalsha", "calls"),
        cmdstat(&i, "evalsha", "failed_calls"),
        cmdstat(&i, "evalsha", "rejected_calls"),
    )
}

/// The `process_id` of `INFO server`.
///
/// # Panics
///
/// When the reply has none.
pub async fn process_id(url: &str) -> u32 {
    let i = info(url, "server").await;
    info_field(&i, "process_id")
        .and_then(|p| p.parse().ok())
        .expect("INFO server has process_id")
}

/// Loads a Lua script (`SCRIPT LOAD`) on `conn`'s server; its SHA.
///
/// # Panics
///
/// When the server refuses the script.
pub async fn load_script(conn: &mut MultiplexedConnection, source: &str) -> String {
    redis::Script::new(source)
        .prepare_invoke()
        .load_async(conn)
        .await
        .expect("SCRIPT LOAD")
}

/// Whether `key` exists on `conn`'s server.
///
/// # Panics
///
/// When the command fails.
pub async fn exists(conn: &mut MultiplexedConnection, key: &str) -> bool {
    redis::cmd("EXISTS")
        .arg(key)
        .query_async::<u64>(conn)
        .await
        .expect("EXISTS")
        == 1
}
