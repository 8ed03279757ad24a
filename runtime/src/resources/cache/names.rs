//! The names a cache's keys are sent under: the deployment's prefix, then
//! the handle's, then the key the handler named.

use redis::{RedisWrite, ToRedisArgs};

use super::slots;
use crate::resources::error::Fault;

/// A handle's prefixes.
pub(crate) struct Names<'c> {
    deployment: &'c str,
    handle: &'c str,
}

/// A key as sent: written straight into the command, prefixes and all,
/// without a string of its own.
pub(crate) struct Key<'c, 'k> {
    names: &'c Names<'c>,
    key: &'k str,
}

impl ToRedisArgs for Key<'_, '_> {
    fn write_redis_args<W>(&self, out: &mut W)
    where
        W: ?Sized + RedisWrite,
    {
        use std::io::Write as _;
        let mut writer = out.writer_for_next_arg();
        // Writing to a command's own buffer does not fail.
        let _ = writer.write_all(self.names.deployment.as_bytes());
        let _ = writer.write_all(self.names.handle.as_bytes());
        let _ = writer.write_all(self.key.as_bytes());
    }
}

impl<'c> Names<'c> {
    pub(crate) fn new(deployment: &'c str, handle: &'c str) -> Self {
        Names { deployment, handle }
    }

    /// `key` as sent.
    pub(crate) fn key<'k>(&'c self, key: &'k str) -> Key<'c, 'k> {
        Key { names: self, key }
    }

    /// `key` as sent, as bytes of its own.
    pub(crate) fn full(&self, key: &str) -> Vec<u8> {
        [self.deployment, self.handle, key].concat().into_bytes()
    }

    /// The key a handler named, from one the cache gave back; `None` for a
    /// key outside the handle's prefixes.
    pub(crate) fn strip(&self, sent: &[u8]) -> Option<String> {
        let rest = sent.strip_prefix(self.deployment.as_bytes())?.strip_prefix(self.handle.as_bytes())?;
        String::from_utf8(rest.to_vec()).ok()
    }

    /// A `SCAN` pattern that matches `pattern` under the handle's
    /// prefixes, which are matched as they are written.
    pub(crate) fn pattern(&self, pattern: &str) -> Vec<u8> {
        let mut escaped = Vec::with_capacity(self.deployment.len() + self.handle.len() + pattern.len());
        for byte in self.deployment.bytes().chain(self.handle.bytes()) {
            if matches!(byte, b'*' | b'?' | b'[' | b']' | b'\\') {
                escaped.push(b'\\');
            }
            escaped.push(byte);
        }
        escaped.extend_from_slice(pattern.as_bytes());
        escaped
    }

    /// Refuses `keys` that are not all on one shard, naming two of them.
    pub(crate) fn on_one_shard(&self, keys: &[&str]) -> Result<(), Fault> {
        let full: Vec<Vec<u8>> = keys.iter().map(|key| self.full(key)).collect();
        let full: Vec<&[u8]> = full.iter().map(Vec::as_slice).collect();
        match slots::first_apart(&full) {
            None => Ok(()),
            Some((first, other)) => {
                let named =
                    |sent: &[u8]| self.strip(sent).unwrap_or_else(|| String::from_utf8_lossy(sent).into_owned());
                Err(Fault::invalid(
                    "CrossSlot",
                    format!(
                        "`{}` and `{}` are on different shards of the cluster (slots {} and {}), and this needs its \
                         keys on one: put them on one with a hash tag, as in `{{tag}}:a` and `{{tag}}:b`",
                        named(first),
                        named(other),
                        slots::slot(first),
                        slots::slot(other)
                    ),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sent_under_both_prefixes_and_come_back_without_them() {
        let names = Names::new("app1:", "sessions:");
        let mut command = redis::cmd("GET");
        command.arg(names.key("u7"));
        assert_eq!(command.get_packed_command(), b"*2\r\n$3\r\nGET\r\n$16\r\napp1:sessions:u7\r\n");
        assert_eq!(names.full("u7"), b"app1:sessions:u7");
        assert_eq!(names.strip(b"app1:sessions:u7").as_deref(), Some("u7"));
        assert_eq!(names.strip(b"app2:sessions:u7"), None);
    }

    #[test]
    fn a_scan_pattern_matches_prefixes_as_written() {
        assert_eq!(Names::new("a*[1]:", "").pattern("user:*"), b"a\\*\\[1\\]:user:*");
        assert_eq!(Names::new("", "").pattern("*"), b"*");
    }

    #[test]
    fn keys_on_different_shards_are_refused_by_name() {
        let names = Names::new("p:", "");
        assert!(names.on_one_shard(&["{u}a", "{u}b"]).is_ok());
        let refused = names.on_one_shard(&["foo", "bar"]).unwrap_err();
        assert_eq!(refused.code.as_deref(), Some("CrossSlot"));
        assert!(refused.message.starts_with("`foo` and `bar` are on different shards"), "{}", refused.message);
    }
}
