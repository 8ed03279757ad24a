//! How a JWT guard is configured.

use std::marker::PhantomData;
use std::path::PathBuf;
use std::time::Duration;

use jsonwebtoken::Validation;

use super::JwtGuard;
use super::config_error::JwtConfigError;
use super::keys::{Key, Material, Source};

/// The clock skew allowed on `exp` and `nbf` unless
/// [`JwtGuardBuilder::leeway`] says otherwise: `jsonwebtoken`'s default.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);

/// The configuration of a [`JwtGuard`]: its keys, the issuers and audiences
/// it accepts, and the clock skew it allows. Nothing is read until
/// [`build`](JwtGuardBuilder::build), which reports every mistake.
///
/// Each key method adds a key, so a guard can verify with several (during a
/// key rotation, say); the algorithms it accepts are exactly those of its
/// keys.
#[must_use = "a builder does nothing until `build` is called"]
pub struct JwtGuardBuilder<C> {
    sources: Vec<Source>,
    issuers: Vec<String>,
    audiences: Vec<String>,
    leeway: Duration,
    claims: PhantomData<fn() -> C>,
}

impl<C> JwtGuardBuilder<C> {
    pub(super) fn new() -> Self {
        JwtGuardBuilder {
            sources: Vec::new(),
            issuers: Vec::new(),
            audiences: Vec::new(),
            leeway: DEFAULT_LEEWAY,
            claims: PhantomData,
        }
    }

    /// Verifies HS256 tokens with this shared secret, of at least 32 bytes.
    pub fn hs256_secret(mut self, secret: impl AsRef<[u8]>) -> Self {
        self.sources.push(Source::Hs256(Material::Bytes(secret.as_ref().to_vec())));
        self
    }

    /// Verifies HS256 tokens with the shared secret held (as text, at least
    /// 32 bytes of it) by the environment variable `name`, read by
    /// [`build`](JwtGuardBuilder::build).
    pub fn hs256_secret_from_env(mut self, name: &str) -> Self {
        self.sources.push(Source::Hs256(Material::Env(name.to_string())));
        self
    }

    /// Verifies RS256 tokens with this RSA public key, in PEM (`PUBLIC KEY`
    /// or `RSA PUBLIC KEY`), of 2048 to 8192 bits.
    pub fn rs256_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.sources.push(Source::Rs256(Material::Bytes(pem.as_ref().to_vec())));
        self
    }

    /// Verifies RS256 tokens with the RSA public key whose PEM the
    /// environment variable `name` holds.
    pub fn rs256_pem_from_env(mut self, name: &str) -> Self {
        self.sources.push(Source::Rs256(Material::Env(name.to_string())));
        self
    }

    /// Verifies ES256 tokens with this EC P-256 public key, in PEM
    /// (`PUBLIC KEY`).
    pub fn es256_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.sources.push(Source::Es256(Material::Bytes(pem.as_ref().to_vec())));
        self
    }

    /// Verifies ES256 tokens with the EC P-256 public key whose PEM the
    /// environment variable `name` holds.
    pub fn es256_pem_from_env(mut self, name: &str) -> Self {
        self.sources.push(Source::Es256(Material::Env(name.to_string())));
        self
    }

    /// Verifies tokens with the keys of a JWKS file (`{"keys": [...]}`),
    /// read once by [`build`](JwtGuardBuilder::build): RSA keys with RS256,
    /// EC P-256 keys with ES256. A token is verified only with the key its
    /// header's `kid` names. Every key needs a `kid`; keys marked
    /// `"use": "enc"` are passed over; any other key the guard cannot
    /// verify with (another curve or algorithm, a shared secret) is a
    /// build error.
    pub fn jwks_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.sources.push(Source::Jwks(path.into()));
        self
    }

    /// Accepts tokens whose `iss` is `issuer`. Required: a guard accepts
    /// tokens of the issuers named, of which there must be one at least.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuers.push(issuer.into());
        self
    }

    /// Accepts tokens whose `aud` is, or includes, `audience`. Required: a
    /// guard accepts tokens for the audiences named, of which there must be
    /// one at least, so that a token minted for another service is refused.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The clock skew allowed when checking `exp` and `nbf`, in whole
    /// seconds (a fraction is dropped); [`DEFAULT_LEEWAY`] unless set.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The guard, once every key has been read and checked.
    ///
    /// # Errors
    ///
    /// A [`JwtConfigError`] naming what is wrong: no key, issuer or
    /// audience configured; an environment variable not set, empty or not
    /// UTF-8; an HS256 secret under 32 bytes; a PEM that is not a public
    /// key of its method's kind; a JWKS file that cannot be read, is not a
    /// key set, or holds a key the guard cannot verify with.
    pub fn build(self) -> Result<JwtGuard<C>, JwtConfigError> {
        if self.sources.is_empty() {
            return Err(JwtConfigError::new(
                "a JWT guard needs a key: call `hs256_secret`, `rs256_pem`, `es256_pem` or `jwks_file` (or their `_from_env` forms)",
            ));
        }
        if self.issuers.is_empty() {
            return Err(JwtConfigError::new("a JWT guard needs the issuer it accepts tokens of: call `issuer`"));
        }
        if self.audiences.is_empty() {
            return Err(JwtConfigError::new("a JWT guard needs the audience it accepts tokens for: call `audience`"));
        }
        let mut keys: Vec<Key> = Vec::new();
        for source in &self.sources {
            source.load(&mut keys)?;
        }
        let keys = keys
            .into_iter()
            .map(|key| {
                let validation = self.validation(&key);
                (key, validation)
            })
            .collect();
        Ok(JwtGuard { keys, claims: PhantomData })
    }

    /// What a token verified with `key` must also satisfy.
    fn validation(&self, key: &Key) -> Validation {
        let mut validation = Validation::new(key.algorithm);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.leeway = self.leeway.as_secs();
        validation.set_issuer(&self.issuers);
        validation.set_audience(&self.audiences);
        validation
    }
}
