//! The control channel's connection: one multiplexed connection, made on
//! first use and again after it fails, each call under a time-out.

use std::time::Duration;

use ratelimit_core::control::ControlError;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, FromRedisValue, RedisError};

/// A lazily connected, self-healing connection.
#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) client: Client,
    conn: tokio::sync::Mutex<Option<MultiplexedConnection>>,
    pub(crate) timeout: Duration,
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

impl Conn {
    pub(crate) fn new(client: Client, timeout: Duration) -> Self {
        Self {
            client,
            conn: tokio::sync::Mutex::new(None),
            timeout,
        }
    }

    /// The connection, connecting if there is none.
    async fn get(&self) -> Result<MultiplexedConnection, ControlError> {
        let mut slot = self.conn.lock().await;
        if let Some(c) = &*slot {
            return Ok(c.clone());
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout));
        let c = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| unavailable(&e))?;
        *slot = Some(c.clone());
        Ok(c)
    }

    /// Forgets the connection after a failure that was not the server's
    /// answer (a refused connection, a time-out, a dropped link).
    async fn forget_after(&self, e: &RedisError) {
        if e.code().is_none() {
            *self.conn.lock().await = None;
        }
    }

    /// Runs a script.
    pub(crate) async fn script<T: FromRedisValue>(
        &self,
        script: &redis::Script,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<T, ControlError> {
        let mut c = self.get().await?;
        let mut inv = script.prepare_invoke();
        for k in keys {
            inv.key(*k);
        }
        for a in args {
            inv.arg(*a);
        }
        let r = inv.invoke_async(&mut c).await;
        if let Err(e) = &r {
            self.forget_after(e).await;
        }
        r.map_err(|e| unavailable(&e))
    }

    /// Runs a command.
    pub(crate) async fn cmd<T: FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, ControlError> {
        let mut c = self.get().await?;
        let r = cmd.query_async(&mut c).await;
        if let Err(e) = &r {
            self.forget_after(e).await;
        }
        r.map_err(|e| unavailable(&e))
    }

    /// Runs a pipeline (one round trip, not a transaction).
    pub(crate) async fn pipe<T: FromRedisValue>(
        &self,
        pipe: &redis::Pipeline,
    ) -> Result<T, ControlError> {
        let mut c = self.get().await?;
        let r = pipe.query_async(&mut c).await;
        if let Err(e) = &r {
            self.forget_after(e).await;
        }
        r.map_err(|e| unavailable(&e))
    }
}
