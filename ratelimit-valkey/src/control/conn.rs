//! The control channel's connection: one multiplexed connection, made on
//! first use and again after it fails, each call under a time-out.
//!
//! On a Valkey Cluster it finds the node serving the control keys' slot
//! by itself: a `MOVED` reply (the command did not run there) moves the
//! connection to the node it names and the call is sent there once more.
//! A node that cannot be reached is left for the next of the seed nodes
//! ([`ValkeyControl::open_cluster`](super::ValkeyControl::open_cluster)),
//! which redirects in turn: after a failover, calls reach the promoted
//! replica without a restart. An `ASK` reply (the slot moving between
//! nodes) fails the call; a later call finds the slot's new node.

use std::time::Duration;

use ratelimit_core::control::ControlError;
use redis::aio::{MultiplexedConnection, PubSub};
use redis::{AsyncConnectionConfig, Client, FromRedisValue, RedisError, RedisResult};

use crate::cluster::redirect_addr;
use crate::url::{addr_of, with_addr};

/// A lazily connected, self-healing connection to the node serving the
/// control keys.
pub(crate) struct Conn {
    /// The nodes to start from (normalized URLs), in order.
    seeds: Vec<String>,
    link: tokio::sync::Mutex<Link>,
    timeout: Duration,
}

/// The node calls go to, and the connection to it once made.
struct Link {
    url: String,
    conn: Option<MultiplexedConnection>,
}

/// The seeds' count and the time-out, never a URL (it may hold a
/// password).
impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("seeds", &self.seeds.len())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A Valkey error as the control says it: a refusal by the ACL or any
/// other failure leaves the store unavailable to this caller.
pub(crate) fn unavailable(e: &RedisError) -> ControlError {
    if e.code() == Some("NOPERM") {
        return ControlError::Unavailable(format!(
            "NOPERM: this Valkey user may not do that (see the ACL set-up in \"Running a fleet\"): {e}"
        ));
    }
    ControlError::Unavailable(e.to_string())
}

/// What to do after one attempt of a call.
enum Step<T> {
    Done(Result<T, ControlError>),
    /// Redirected (`MOVED`): send it to the node now linked.
    Again,
}

impl Conn {
    /// A connection starting from `seeds` (normalized URLs, at least one).
    pub(crate) fn new(seeds: Vec<String>, timeout: Duration) -> Self {
        let url = seeds.first().cloned().unwrap_or_default();
        Self {
            seeds,
            link: tokio::sync::Mutex::new(Link { url, conn: None }),
            timeout,
        }
    }

    /// The connection, connecting if there is none: to the node last
    /// linked, else to each seed in turn.
    async fn get(&self) -> Result<MultiplexedConnection, ControlError> {
        let mut link = self.link.lock().await;
        if let Some(c) = &link.conn {
            return Ok(c.clone());
        }
        let first = link.url.clone();
        let others = self.seeds.iter().filter(|s| **s != first);
        let tries: Vec<String> = std::iter::once(&first).chain(others).cloned().collect();
        let mut failure = None;
        for url in tries {
            match self.connect(&url).await {
                Ok(c) => {
                    *link = Link {
                        url,
                        conn: Some(c.clone()),
                    };
                    return Ok(c);
                }
                Err(e) => failure = Some(e),
            }
        }
        Err(failure.map_or_else(
            || ControlError::Unavailable("no Valkey node to connect to".into()),
            |e| unavailable(&e),
        ))
    }

    async fn connect(&self, url: &str) -> RedisResult<MultiplexedConnection> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout));
        let client = Client::open(url)?;
        client
            .get_multiplexed_async_connection_with_config(&config)
            .await
    }

    /// A pub/sub connection to the node last linked (in a cluster, a
    /// message published on any node reaches the subscribers of every
    /// node).
    pub(crate) async fn pubsub(&self) -> RedisResult<PubSub> {
        let url = self.link.lock().await.url.clone();
        Client::open(url)?.get_async_pubsub().await
    }

    /// What follows an attempt that answered `r`: a first `MOVED` links
    /// the node it names (the command did not run); a failure that was not
    /// the server's answer (a refused connection, a time-out, a dropped
    /// link) forgets the connection, so that the next call reconnects.
    async fn after<T>(&self, r: RedisResult<T>, redirected: &mut bool) -> Step<T> {
        let e = match r {
            Ok(v) => return Step::Done(Ok(v)),
            Err(e) => e,
        };
        let mut link = self.link.lock().await;
        let moved = (e.code() == Some("MOVED"))
            .then(|| {
                let from = addr_of(&link.url).ok()?;
                redirect_addr(e.detail()?, &from)
            })
            .flatten();
        match moved {
            Some(addr) if !*redirected => {
                *redirected = true;
                *link = Link {
                    url: with_addr(&link.url, &addr),
                    conn: None,
                };
                return Step::Again;
            }
            _ if e.code().is_none() => link.conn = None,
            _ => {}
        }
        Step::Done(Err(unavailable(&e)))
    }

    /// Runs one call made by `attempt` on the connection: sent once more
    /// after a `MOVED` (see [`Conn::after`]).
    async fn run<T, F, Fut>(&self, mut attempt: F) -> Result<T, ControlError>
    where
        F: FnMut(MultiplexedConnection) -> Fut,
        Fut: std::future::Future<Output = RedisResult<T>>,
    {
        let mut redirected = false;
        loop {
            let r = attempt(self.get().await?).await;
            if let Step::Done(r) = self.after(r, &mut redirected).await {
                return r;
            }
        }
    }

    /// Runs a script.
    pub(crate) async fn script<T: FromRedisValue>(
        &self,
        script: &redis::Script,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<T, ControlError> {
        self.run(|mut c| async move {
            let mut inv = script.prepare_invoke();
            for k in keys {
                inv.key(*k);
            }
            for a in args {
                inv.arg(*a);
            }
            inv.invoke_async(&mut c).await
        })
        .await
    }

    /// Runs a command.
    pub(crate) async fn cmd<T: FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, ControlError> {
        self.run(|mut c| async move { cmd.query_async(&mut c).await })
            .await
    }

    /// Runs a pipeline (one round trip, not a transaction).
    pub(crate) async fn pipe<T: FromRedisValue>(
        &self,
        pipe: &redis::Pipeline,
    ) -> Result<T, ControlError> {
        self.run(|mut c| async move { pipe.query_async(&mut c).await })
            .await
    }
}
