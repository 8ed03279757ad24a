//! The content hash of the folder and in-memory buckets' entity tags:
//! 128-bit FNV-1a. It tells one content from another, as an entity tag
//! must; it is not S3's MD5, and it is not a guard against tampering.

const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
const PRIME: u128 = 0x0000000001000000000000000000013b;

/// A hash fed a chunk at a time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Digest(u128);

impl Digest {
    pub(crate) fn new() -> Self {
        Digest(OFFSET)
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u128::from(*byte);
            self.0 = self.0.wrapping_mul(PRIME);
        }
    }

    /// The hash in hexadecimal.
    pub(crate) fn hex(&self) -> String {
        format!("{:032x}", self.0)
    }

    /// The entity tag: the hash quoted, as S3 quotes its tags.
    pub(crate) fn etag(&self) -> String {
        format!("\"{}\"", self.hex())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv1a_128_whatever_the_chunks() {
        // The published FNV-1a 128 values of "" and "a".
        assert_eq!(Digest::new().hex(), "6c62272e07bb014262b821756295c58d");
        let mut a = Digest::new();
        a.update(b"a");
        assert_eq!(a.hex(), "d228cb696f1a8caf78912b704e4a8964");
        let mut whole = Digest::new();
        whole.update(b"hello world");
        let mut parts = Digest::new();
        parts.update(b"hello");
        parts.update(b" world");
        assert_eq!(whole.etag(), parts.etag());
        assert!(whole.etag().starts_with('"') && whole.etag().ends_with('"'));
    }
}
