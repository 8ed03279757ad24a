//! The keys a JWT guard verifies with, loaded from where its builder was
//! told to find them.

use std::collections::BTreeSet;
use std::path::PathBuf;

use jsonwebtoken::crypto::CryptoProvider;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind};

use super::config_error::JwtConfigError;

/// The shortest HS256 secret accepted: as long as the hash's output, as
/// RFC 7518 §3.2 requires. A shorter one can be guessed offline from any
/// token it signed.
const MIN_HS256_SECRET_BYTES: usize = 32;

/// The RSA modulus sizes accepted, in bits: under 2048 is breakable, and
/// over 8192 the RSA backend refuses to verify with.
const RSA_BITS: std::ops::RangeInclusive<usize> = 2048..=8192;

/// A key to verify with, and the one algorithm it verifies.
pub(super) struct Key {
    /// The key's id in a JWKS file: only a token naming it is verified with
    /// it. A key given on its own has none, and is tried for any token of
    /// its algorithm.
    pub(super) kid: Option<String>,
    pub(super) algorithm: Algorithm,
    pub(super) decoding: DecodingKey,
}

/// Bytes given directly, or the name of the environment variable holding them.
pub(super) enum Material {
    Bytes(Vec<u8>),
    Env(String),
}

/// Where the builder was told a key is.
pub(super) enum Source {
    Hs256(Material),
    Rs256(Material),
    Es256(Material),
    Jwks(PathBuf),
}

impl Source {
    /// The keys this source holds, added to `keys`.
    pub(super) fn load(&self, keys: &mut Vec<Key>) -> Result<(), JwtConfigError> {
        match self {
            Source::Hs256(material) => {
                let (secret, place) = material.read("HS256 secret", "hs256_secret")?;
                keys.push(hs256(&secret, &place)?);
            }
            Source::Rs256(material) => {
                let (pem, place) = material.read("RS256 public key (PEM)", "rs256_pem")?;
                keys.push(rs256_pem(&pem, &place)?);
            }
            Source::Es256(material) => {
                let (pem, place) = material.read("ES256 public key (PEM)", "es256_pem")?;
                keys.push(es256_pem(&pem, &place)?);
            }
            Source::Jwks(path) => jwks_file(path, keys)?,
        }
        Ok(())
    }
}

impl Material {
    /// The bytes, and how messages name where they came from.
    fn read(&self, what: &str, method: &str) -> Result<(Vec<u8>, String), JwtConfigError> {
        match self {
            Material::Bytes(bytes) => Ok((bytes.clone(), format!("the {what} given to `{method}`"))),
            Material::Env(name) => {
                let place = format!("the {what} in the environment variable {name}");
                match std::env::var(name) {
                    Ok(value) if value.trim().is_empty() => Err(JwtConfigError::new(format!(
                        "the environment variable {name} is empty: it should hold the {what}"
                    ))),
                    Ok(value) => Ok((value.into_bytes(), place)),
                    Err(std::env::VarError::NotPresent) => Err(JwtConfigError::new(format!(
                        "the environment variable {name} is not set: it should hold the {what}"
                    ))),
                    Err(std::env::VarError::NotUnicode(_)) => {
                        Err(JwtConfigError::new(format!("the environment variable {name} is not valid UTF-8")))
                    }
                }
            }
        }
    }
}

/// The crypto backend, which is the pure-Rust one unless the application
/// also enabled another on `jsonwebtoken` and installed neither.
fn provider() -> Result<&'static CryptoProvider, JwtConfigError> {
    CryptoProvider::try_get_default().ok_or_else(|| {
        JwtConfigError::new(
            "jsonwebtoken has no default crypto provider: more than one backend is enabled on it, so install one \
             with `jsonwebtoken::crypto::CryptoProvider::install_default` before building the guard",
        )
    })
}

fn hs256(secret: &[u8], place: &str) -> Result<Key, JwtConfigError> {
    if secret.len() < MIN_HS256_SECRET_BYTES {
        return Err(JwtConfigError::new(format!(
            "{place} is {} bytes long; an HS256 secret must be at least {MIN_HS256_SECRET_BYTES}",
            secret.len()
        )));
    }
    let decoding = DecodingKey::from_secret(secret)
        .map_err(|error| JwtConfigError::new(format!("{place} cannot be used: {error}")))?;
    Ok(Key { kid: None, algorithm: Algorithm::HS256, decoding })
}

fn rs256_pem(pem: &[u8], place: &str) -> Result<Key, JwtConfigError> {
    let refused =
        || JwtConfigError::new(format!("{place} is not a PEM RSA public key (`PUBLIC KEY` or `RSA PUBLIC KEY`)"));
    let parsed = DecodingKey::from_rsa_pem(pem).map_err(|_| refused())?;
    // `from_rsa_pem` also takes a private key, and checks nothing of the
    // key itself; reading it as a public key's components does both.
    let DecodingKeyKind::SecretOrDer(der) = parsed.kind() else { return Err(refused()) };
    let (n, e) = (provider()?.key_utils.rsa_pub_components_from_public_key)(der).map_err(|_| refused())?;
    rsa_key(&n, &e, None, place)
}

fn es256_pem(pem: &[u8], place: &str) -> Result<Key, JwtConfigError> {
    let refused = || JwtConfigError::new(format!("{place} is not a PEM EC P-256 public key (`PUBLIC KEY`)"));
    let decoding = DecodingKey::from_ec_pem(pem).map_err(|_| refused())?;
    ec_key(decoding, None, place)
}

/// An RSA key from its components, once they are a usable public key.
fn rsa_key(n: &[u8], e: &[u8], kid: Option<String>, place: &str) -> Result<Key, JwtConfigError> {
    let bits = bit_length(n);
    if !RSA_BITS.contains(&bits) {
        return Err(JwtConfigError::new(format!(
            "{place} is an RSA key of {bits} bits; this guard accepts {} to {} bits",
            RSA_BITS.start(),
            RSA_BITS.end()
        )));
    }
    let exponent_ok = bit_length(e) <= 33 && e.last().is_some_and(|low| low & 1 == 1) && bit_length(e) >= 2;
    if !exponent_ok {
        return Err(JwtConfigError::new(format!(
            "{place} has an RSA public exponent that is not an odd number of 2 to 33 bits"
        )));
    }
    Ok(Key { kid, algorithm: Algorithm::RS256, decoding: DecodingKey::from_rsa_raw_components(n, e) })
}

/// An EC key, once the backend takes it as a P-256 point.
fn ec_key(decoding: DecodingKey, kid: Option<String>, place: &str) -> Result<Key, JwtConfigError> {
    (provider()?.verifier_factory)(&Algorithm::ES256, &decoding)
        .map_err(|_| JwtConfigError::new(format!("{place} is not a point on the P-256 curve")))?;
    Ok(Key { kid, algorithm: Algorithm::ES256, decoding })
}

/// How many bits a big-endian unsigned number has.
fn bit_length(bytes: &[u8]) -> usize {
    let significant: &[u8] = match bytes.iter().position(|b| *b != 0) {
        Some(first) => &bytes[first..],
        None => return 0,
    };
    (significant.len() - 1) * 8 + (8 - significant[0].leading_zeros() as usize)
}

/// The signing keys of a JWKS file. Keys marked `"use": "enc"` are not for
/// signatures and are passed over; any other key this guard cannot verify
/// with refuses the file, so that a token naming it is never silently
/// unverifiable.
fn jwks_file(path: &PathBuf, keys: &mut Vec<Key>) -> Result<(), JwtConfigError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|error| JwtConfigError::new(format!("cannot read the JWKS file {shown}: {error}")))?;
    let set: JwkSet = serde_json::from_str(&text).map_err(|error| {
        JwtConfigError::new(format!("the JWKS file {shown} is not a JWK set (`{{\"keys\": [...]}}`): {error}"))
    })?;
    let mut kids = BTreeSet::new();
    let before = keys.len();
    for (index, jwk) in set.keys.iter().enumerate() {
        if jwk.common.public_key_use == Some(PublicKeyUse::Encryption) {
            continue;
        }
        let Some(kid) = jwk.common.key_id.clone() else {
            return Err(JwtConfigError::new(format!(
                "key {index} of the JWKS file {shown} has no `kid`: a token chooses its key by it"
            )));
        };
        if !kids.insert(kid.clone()) {
            return Err(JwtConfigError::new(format!("the JWKS file {shown} has two keys with the kid {kid:?}")));
        }
        let place = format!("the key {kid:?} of the JWKS file {shown}");
        keys.push(jwk_key(jwk, kid, &place)?);
    }
    if keys.len() == before {
        return Err(JwtConfigError::new(format!("the JWKS file {shown} has no signing key")));
    }
    Ok(())
}

fn jwk_key(jwk: &Jwk, kid: String, place: &str) -> Result<Key, JwtConfigError> {
    let marked = |expected: KeyAlgorithm| match jwk.common.key_algorithm {
        Some(algorithm) if algorithm != expected => Err(JwtConfigError::new(format!(
            "{place} is marked for {algorithm:?}; this guard verifies RSA keys with RS256 and EC keys with ES256"
        ))),
        _ => Ok(()),
    };
    let undecodable = |what: &str| JwtConfigError::new(format!("{place} has a `{what}` that is not base64url"));
    match &jwk.algorithm {
        AlgorithmParameters::RSA(rsa) => {
            marked(KeyAlgorithm::RS256)?;
            let n = base64url(&rsa.n).ok_or_else(|| undecodable("n"))?;
            let e = base64url(&rsa.e).ok_or_else(|| undecodable("e"))?;
            rsa_key(&n, &e, Some(kid), place)
        }
        AlgorithmParameters::EllipticCurve(ec) => {
            marked(KeyAlgorithm::ES256)?;
            if ec.curve != EllipticCurve::P256 {
                return Err(JwtConfigError::new(format!(
                    "{place} is on the curve {:?}; this guard verifies EC keys on P-256 (ES256) only",
                    ec.curve
                )));
            }
            let decoding = DecodingKey::from_ec_components(&ec.x, &ec.y)
                .map_err(|_| JwtConfigError::new(format!("{place} has an `x` or `y` that is not base64url")))?;
            ec_key(decoding, Some(kid), place)
        }
        AlgorithmParameters::OctetKey(_) => Err(JwtConfigError::new(format!(
            "{place} is a shared secret (`oct`); give an HS256 secret with `hs256_secret`"
        ))),
        _ => Err(JwtConfigError::new(format!("{place} is not an RSA or EC key; this guard verifies RS256 and ES256"))),
    }
}

fn base64url(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_length_counts_from_the_first_set_bit() {
        assert_eq!(bit_length(&[]), 0);
        assert_eq!(bit_length(&[0, 0]), 0);
        assert_eq!(bit_length(&[0, 1]), 1);
        assert_eq!(bit_length(&[0x01, 0x00, 0x01]), 17);
        assert_eq!(bit_length(&[0x80; 256]), 2048);
    }

    #[test]
    fn an_rsa_key_too_small_or_with_an_even_exponent_is_refused() {
        let small = rsa_key(&[0xff; 128], &[1, 0, 1], None, "k").err().unwrap();
        assert_eq!(small.message(), "k is an RSA key of 1024 bits; this guard accepts 2048 to 8192 bits");
        let even = rsa_key(&[0xff; 256], &[2], None, "k").err().unwrap();
        assert!(even.message().contains("exponent"), "{even}");
        assert!(rsa_key(&[0xff; 256], &[1, 0, 1], None, "k").is_ok());
    }
}
