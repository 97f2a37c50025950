//! The control channel's connection: one multiplexed connection, made on
//! first use and again after it fails, each call under a time-out.
//!
//! On a Valkey Cluster it finds the node serving the control keys' slot
//! by itself: a `MOVED` reply (the command did not run there) moves the
//! connection to the node it names and the call is sent there once more.
//! A node that cannot be reached is left for the next of the seed nodes
//! ([`ValkeyControl::open_cluster`](super::ValkeyControl::open_cluster)),
//! which redirects in turn: after a failover, calls reach the promoted
//! replica without a restart.
//!
//! While the slot moves between nodes (a resharding), the old node answers
//! `ASK` for keys it no longer holds: the call is sent once to the node
//! named, after `ASKING`, on a connection of its own (the flag holds for
//! one command of one connection), and the link stays where it was. A
//! `TRYAGAIN` (the call's keys are split between the two nodes for a
//! moment) did not run either: the call is sent again every 50 ms until
//! the slot has moved, within its time-out.
//!
//! A connection found dropped (Valkey restarted since the last call; the
//! follower keeps a connection of its own, so an operator's may sit idle
//! through a restart) is made again and the call sent once more: the
//! control's calls are compare-and-set (a publish), idempotent (a switch,
//! the secret, a report) or harmless twice (a lift).

use std::time::{Duration, Instant};

use ratelimit_core::control::ControlError;
use redis::aio::{MultiplexedConnection, PubSub};
use redis::{AsyncConnectionConfig, Client, FromRedisValue, RedisError, RedisResult, Value};

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
    /// `ASK`: send it once to this node (a URL), after `ASKING`.
    Ask(String),
    /// `TRYAGAIN`: send it again a little later.
    Wait(RedisError),
}

/// The redirects one attempt of a call has followed: a `MOVED` (the slot
/// has moved) then an `ASK` (and is moving again) is the most one call
/// needs; a second of either fails it. Likewise one reconnect, when the
/// link is found dropped (Valkey restarted since the last call).
#[derive(Default)]
struct Redirects {
    moved: bool,
    asked: bool,
    reconnected: bool,
}

/// How long a call waits before it is sent again after a `TRYAGAIN`.
const TRY_AGAIN_AFTER: Duration = Duration::from_millis(50);

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

    /// Another connection from the same seeds, made on first use (on the
    /// runtime that uses it).
    pub(crate) fn fresh(&self) -> Self {
        Self::new(self.seeds.clone(), self.timeout)
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
    /// the node it names (the command did not run) and a first `ASK` names
    /// the node to ask once; a failure that was not the server's answer (a
    /// refused connection, a time-out, a dropped link) forgets the
    /// connection, so that the next call reconnects. `asked`: the attempt
    /// went to an `ASK`'s node, on a connection of its own.
    async fn after<T>(&self, r: RedisResult<T>, seen: &mut Redirects, asked: bool) -> Step<T> {
        let e = match r {
            Ok(v) => return Step::Done(Ok(v)),
            Err(e) => e,
        };
        if e.code() == Some("TRYAGAIN") {
            return Step::Wait(e);
        }
        let mut link = self.link.lock().await;
        let (moved, ask) = (e.code() == Some("MOVED"), e.code() == Some("ASK"));
        let to = ((moved && !seen.moved) || (ask && !seen.asked))
            .then(|| {
                let from = addr_of(&link.url).ok()?;
                redirect_addr(&detail_of(&e)?, &from)
            })
            .flatten();
        match to {
            Some(addr) => {
                let url = with_addr(&link.url, &addr);
                if ask {
                    seen.asked = true;
                    return Step::Ask(url);
                }
                seen.moved = true;
                *link = Link { url, conn: None };
                return Step::Again;
            }
            None if e.code().is_none() && !asked => {
                link.conn = None;
                if e.is_connection_dropped() && !seen.reconnected {
                    seen.reconnected = true;
                    return Step::Again;
                }
            }
            None => {}
        }
        Step::Done(Err(unavailable(&e)))
    }

    /// Runs one call made by `attempt` on a connection, `true` when it
    /// must send `ASKING` first: sent once more after a `MOVED` and after
    /// an `ASK` (see [`Conn::after`]), and again after a `TRYAGAIN` until
    /// the time-out.
    async fn run<T, F, Fut>(&self, mut attempt: F) -> Result<T, ControlError>
    where
        F: FnMut(MultiplexedConnection, bool) -> Fut,
        Fut: std::future::Future<Output = RedisResult<T>>,
    {
        let deadline = Instant::now() + self.timeout;
        let mut seen = Redirects::default();
        let mut ask: Option<String> = None;
        loop {
            let asked = ask.is_some();
            let r = match ask.take() {
                None => attempt(self.get().await?, false).await,
                Some(url) => match self.connect(&url).await {
                    Ok(c) => attempt(c, true).await,
                    Err(e) => Err(e),
                },
            };
            match self.after(r, &mut seen, asked).await {
                Step::Done(r) => return r,
                Step::Again => {}
                Step::Ask(url) => ask = Some(url),
                Step::Wait(e) => {
                    if Instant::now() + TRY_AGAIN_AFTER > deadline {
                        return Err(unavailable(&e));
                    }
                    tokio::time::sleep(TRY_AGAIN_AFTER).await;
                    seen = Redirects::default();
                }
            }
        }
    }

    /// Runs a script. On an `ASK`'s node it is loaded first: `ASKING`
    /// holds for the one `EVALSHA` that follows.
    pub(crate) async fn script<T: FromRedisValue>(
        &self,
        script: &redis::Script,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<T, ControlError> {
        self.run(|mut c, asking| async move {
            let mut inv = script.prepare_invoke();
            for k in keys {
                inv.key(*k);
            }
            for a in args {
                inv.arg(*a);
            }
            if asking {
                inv.load_async(&mut c).await?;
                asking_cmd().query_async::<()>(&mut c).await?;
            }
            inv.invoke_async(&mut c).await
        })
        .await
    }

    /// Runs a command.
    pub(crate) async fn cmd<T: FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, ControlError> {
        self.run(|mut c, asking| async move {
            if asking {
                asking_cmd().query_async::<()>(&mut c).await?;
            }
            cmd.query_async(&mut c).await
        })
        .await
    }

    /// Runs a pipeline (one round trip) whose commands answer each on its
    /// own: a command's error is its reply, so a wrong-typed key fails only
    /// the commands that read it. A redirect (`MOVED`, `ASK`, `TRYAGAIN`)
    /// in any reply is the whole call's, followed as for a command (on an
    /// `ASK`'s node each command follows an `ASKING` of its own); the call
    /// fails only when Valkey does not answer.
    pub(crate) async fn pipe_each(
        &self,
        pipe: &redis::Pipeline,
    ) -> Result<Vec<RedisResult<Value>>, ControlError> {
        self.run(|c, asking| async move {
            let replies: Vec<RedisResult<Value>> = send(pipe, c, asking).await?;
            let redirect = replies
                .iter()
                .filter_map(|r| r.as_ref().err())
                .find(|e| matches!(e.code(), Some("MOVED" | "ASK" | "TRYAGAIN")));
            match redirect {
                Some(e) => Err(e.clone()),
                None => Ok(replies),
            }
        })
        .await
    }
}

/// Sends `pipe` on `c`, keeping every reply, errors included; on an
/// `ASK`'s node each command follows an `ASKING` of its own.
async fn send<T: FromRedisValue>(
    pipe: &redis::Pipeline,
    mut c: MultiplexedConnection,
    asking: bool,
) -> RedisResult<T> {
    let mut out = if asking {
        let mut asked = redis::pipe();
        for cmd in pipe.cmd_iter() {
            asked.add_command(asking_cmd()).ignore();
            asked.add_command(cmd.clone());
        }
        asked
    } else {
        pipe.clone()
    };
    out.ignore_errors();
    out.query_async(&mut c).await
}

/// A server error's detail (`3999 10.0.0.2:7000` of a `MOVED`); of a
/// pipeline's failures, the first one's (its commands share one slot, so
/// a redirect names the same node for each).
fn detail_of(e: &RedisError) -> Option<String> {
    if let Some(d) = e.detail() {
        return Some(d.to_string());
    }
    let failures = e.clone().into_server_errors()?;
    failures.first()?.1.details().map(str::to_string)
}

fn asking_cmd() -> redis::Cmd {
    redis::cmd("ASKING")
}
