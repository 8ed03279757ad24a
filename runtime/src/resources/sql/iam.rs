//! RDS and Aurora on AWS: connection tokens signed with the application's
//! own credentials (IAM authentication), and passwords held in Secrets
//! Manager.
//!
//! A token is accepted for 15 minutes to open a connection, and a pool
//! opens connections for as long as it lives, so the pool's connect
//! options are given a new token before the one they hold lapses: when the
//! pool is taken from the handle and its token is older than 10 minutes.
//! Taking it checks the age, not the clock of a timer, which is what holds
//! on a function: a frozen process's timers do not run, but the next
//! invocation takes the pool again.

use std::time::Instant;

use tokio::sync::Mutex;

use super::engine::Engine;
use super::settings::SqlSettings;
use crate::resources::aws_auth::{ConnectRequest, RESIGN_EVERY, signed_now};
use crate::resources::error::{Fault, ResourceErrorKind};

/// The tokens of one pool.
pub(super) struct Tokens {
    settings: SqlSettings,
    host: String,
    /// When the token the pool holds was signed.
    signed_at: Mutex<Instant>,
}

impl Tokens {
    pub(super) fn new(settings: &SqlSettings, host: &str) -> Tokens {
        Tokens { settings: settings.clone(), host: host.to_string(), signed_at: Mutex::new(Instant::now()) }
    }

    /// A token signed now.
    pub(super) async fn sign(&self) -> Result<String, Fault> {
        let endpoint = format!("{}:{}", self.host, self.settings.port);
        let user: String = form_urlencoded::byte_serialize(self.settings.user.as_bytes()).collect();
        let query = format!("Action=connect&DBUser={user}");
        let request = ConnectRequest { service: "rds-db", endpoint: &endpoint, query: &query };
        signed_now(&request, self.settings.region.as_deref())
            .await
            .map_err(|message| Fault::new(ResourceErrorKind::Config, Some("IamToken"), message))
    }

    /// Gives `pool` a new token for the connections it opens from now on,
    /// where the one it holds is due.
    pub(super) async fn refresh_if_due<DB: Engine>(&self, pool: &sqlx::Pool<DB>) -> Result<(), Fault> {
        if self.signed_at.try_lock().is_ok_and(|signed_at| signed_at.elapsed() < RESIGN_EVERY) {
            return Ok(());
        }
        let mut signed_at = self.signed_at.lock().await;
        // Another call may have signed one while this one waited.
        if signed_at.elapsed() < RESIGN_EVERY {
            return Ok(());
        }
        let token = self.sign().await?;
        pool.set_connect_options(DB::connect_options(&self.settings, &self.host, &token));
        *signed_at = Instant::now();
        Ok(())
    }
}

/// The password a Secrets Manager secret holds: the text itself, or the
/// `password` of the JSON object RDS keeps a managed secret as.
pub(super) fn password_in(secret: String) -> String {
    #[derive(serde::Deserialize)]
    struct Managed {
        password: String,
    }
    match serde_json::from_str::<Managed>(&secret) {
        Ok(managed) => managed.password,
        Err(_) => secret,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_managed_secret_gives_its_password_and_a_plain_one_itself() {
        assert_eq!(password_in(r#"{"username": "app", "password": "s3cret"}"#.into()), "s3cret");
        assert_eq!(password_in("s3cret".into()), "s3cret");
        assert_eq!(password_in(r#"{"user": "app"}"#.into()), r#"{"user": "app"}"#);
    }
}
