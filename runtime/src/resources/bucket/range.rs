//! Byte ranges of an object, with the rules S3 reads them by: where a
//! range falls outside the object, and how much of it is served.

use std::fmt;

use crate::resources::ResourceErrorKind;
use crate::resources::error::Fault;

/// The part of an object to read, as HTTP's `Range` names one: positions
/// count from zero, and the last is included.
///
/// A range that starts past the end of the object is refused
/// ([`Refused`](ResourceErrorKind::Refused) with S3's code `InvalidRange`);
/// one that ends past it is served up to the end.
///
/// ```
/// use celerity::resources::bucket::ByteRange;
///
/// let header = ByteRange::between(0, 99); // the first 100 bytes
/// let tail = ByteRange::last(10); // the last 10 bytes
/// let rest = ByteRange::starting_at(4096); // from byte 4096 to the end
/// # let _ = (header, tail, rest);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange(Spec);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    Between { first: u64, last: u64 },
    StartingAt(u64),
    Last(u64),
}

impl ByteRange {
    /// From byte `first` to byte `last`, both included. A `last` before
    /// `first` is refused before anything is sent.
    pub fn between(first: u64, last: u64) -> Self {
        ByteRange(Spec::Between { first, last })
    }

    /// From byte `first` to the end of the object.
    pub fn starting_at(first: u64) -> Self {
        ByteRange(Spec::StartingAt(first))
    }

    /// The last `count` bytes of the object, or all of it where it is
    /// shorter.
    pub fn last(count: u64) -> Self {
        ByteRange(Spec::Last(count))
    }

    /// The range, or why it names no bytes at all whatever the object: S3
    /// reads such a `Range` header as absent and answers the whole object,
    /// which would hand back more than was asked for.
    pub(crate) fn check(&self) -> Result<(), Fault> {
        match self.0 {
            Spec::Between { first, last } if last < first => {
                Err(Fault::invalid("MalformedRange", format!("the range {self} ends before it starts")))
            }
            _ => Ok(()),
        }
    }

    /// The `Range` header's value.
    pub(crate) fn header(&self) -> String {
        format!("bytes={}", self.spec())
    }

    fn spec(&self) -> String {
        match self.0 {
            Spec::Between { first, last } => format!("{first}-{last}"),
            Spec::StartingAt(first) => format!("{first}-"),
            Spec::Last(count) => format!("-{count}"),
        }
    }

    /// The bytes served of an object of `size` bytes, as a start and an end
    /// (excluded), or S3's refusal. `None` where the whole object is served
    /// as though no range were asked for: the last bytes of an empty object.
    pub(crate) fn resolve(&self, size: u64) -> Result<Option<(u64, u64)>, Fault> {
        let refused = || {
            Fault::new(
                ResourceErrorKind::Refused,
                Some("InvalidRange"),
                format!("the range {self} is outside the object, which is {size} bytes"),
            )
        };
        match self.0 {
            Spec::Between { first, last } => {
                if first >= size {
                    return Err(refused());
                }
                Ok(Some((first, last.min(size - 1) + 1)))
            }
            Spec::StartingAt(first) => {
                if first >= size {
                    return Err(refused());
                }
                Ok(Some((first, size)))
            }
            Spec::Last(0) => Err(refused()),
            Spec::Last(_) if size == 0 => Ok(None),
            Spec::Last(count) => Ok(Some((size - count.min(size), size))),
        }
    }
}

impl fmt::Display for ByteRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bytes {}", self.spec())
    }
}

/// The whole object's size from a `Content-Range` answer, `bytes 0-99/1234`.
pub(crate) fn total_of(content_range: &str) -> Option<u64> {
    content_range.rsplit_once('/').and_then(|(_, total)| total.trim().parse().ok())
}

/// The bytes served, as a start and an end (excluded), from a
/// `Content-Range` answer; `None` where the answer names no bytes (a last
/// byte before the first, or past the last a `u64` counts).
pub(crate) fn served_of(content_range: &str) -> Option<(u64, u64)> {
    let spec = content_range.trim().strip_prefix("bytes")?.trim();
    let (served, _) = spec.split_once('/')?;
    let (first, last) = served.split_once('-')?;
    let (first, last) = (first.trim().parse::<u64>().ok()?, last.trim().parse::<u64>().ok()?);
    (first <= last).then_some((first, last.checked_add(1)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_cut_to_the_object_and_refused_past_its_end() {
        assert_eq!(ByteRange::between(2, 5).resolve(10).unwrap(), Some((2, 6)));
        assert_eq!(ByteRange::between(2, 50).resolve(10).unwrap(), Some((2, 10)));
        assert_eq!(ByteRange::starting_at(9).resolve(10).unwrap(), Some((9, 10)));
        assert_eq!(ByteRange::last(3).resolve(10).unwrap(), Some((7, 10)));
        assert_eq!(ByteRange::last(30).resolve(10).unwrap(), Some((0, 10)));
        assert_eq!(ByteRange::last(3).resolve(0).unwrap(), None);
        for refused in [ByteRange::between(10, 12), ByteRange::starting_at(10), ByteRange::last(0)] {
            let fault = refused.resolve(10).unwrap_err();
            assert_eq!((fault.kind, fault.code.as_deref()), (ResourceErrorKind::Refused, Some("InvalidRange")));
        }
        assert_eq!(ByteRange::between(0, 0).resolve(0).unwrap_err().code.as_deref(), Some("InvalidRange"));
    }

    #[test]
    fn a_range_that_ends_before_it_starts_is_not_sent() {
        let fault = ByteRange::between(5, 4).check().unwrap_err();
        assert_eq!((fault.kind, fault.code.as_deref()), (ResourceErrorKind::Invalid, Some("MalformedRange")));
        assert!(ByteRange::between(5, 5).check().is_ok());
    }

    #[test]
    fn the_header_and_the_answer_are_read_as_http_writes_them() {
        assert_eq!(ByteRange::between(0, 99).header(), "bytes=0-99");
        assert_eq!(ByteRange::starting_at(7).header(), "bytes=7-");
        assert_eq!(ByteRange::last(4).header(), "bytes=-4");
        assert_eq!(total_of("bytes 0-99/1234"), Some(1234));
        assert_eq!(total_of("bytes */1234"), Some(1234));
        assert_eq!(total_of("nonsense"), None);
        assert_eq!(served_of("bytes 10-19/1234"), Some((10, 20)));
        assert_eq!(served_of("bytes */1234"), None);
        // A server's answer, however odd, is read without overflow.
        assert_eq!(served_of("bytes 0-18446744073709551615/*"), None);
        assert_eq!(served_of("bytes 9-3/10"), None);
    }
}
