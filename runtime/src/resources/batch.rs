//! Sending a batch of messages: every entry accounted for, in exactly one
//! of three lists, however the service takes it.

use std::future::Future;

use super::error::{Fault, ResourceError};

/// The most entries one batch call takes. A batch is sent in requests of
/// the service's own size (10 entries for SQS and SNS), one after another,
/// within the handler's deadline: a larger batch is refused before
/// anything is sent, rather than left half sent when the deadline comes.
pub const MAX_BATCH_ENTRIES: usize = 500;

/// One message of a batch, with the caller's own name for it, which the
/// [`BatchResult`] carries back. Any name the caller can tell apart will
/// do: it is not sent.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchEntry<M> {
    /// The caller's name for the entry.
    pub id: String,
    /// The message.
    pub message: M,
}

impl<M> BatchEntry<M> {
    /// The entry `id` of `message`.
    pub fn new(id: impl Into<String>, message: impl Into<M>) -> Self {
        BatchEntry { id: id.into(), message: message.into() }
    }
}

/// What became of each entry of a batch. Every entry is in exactly one
/// list: sent, refused by the service (or by the SDK, before sending), or
/// never answered for, because a request failed on its way.
#[derive(Debug, Clone, Default)]
pub struct BatchResult {
    /// The entries the service took.
    pub successful: Vec<Sent>,
    /// The entries refused.
    pub failed: Vec<Refused>,
    /// The entries no answer was had for: those of a request that did not
    /// complete, and those after it, which were not tried. An entry of the
    /// failed request may have arrived; sending it again may deliver it
    /// twice, which a consumer must bear anyway.
    pub unsent: Vec<Unsent>,
}

impl BatchResult {
    /// Whether every entry was sent.
    pub fn is_complete(&self) -> bool {
        self.failed.is_empty() && self.unsent.is_empty()
    }
}

/// An entry the service took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The caller's name for the entry.
    pub id: String,
    /// The service's id for the message.
    pub message_id: String,
}

/// An entry refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The caller's name for the entry.
    pub id: String,
    /// The service's name for the refusal, or the SDK's own for an entry it
    /// would not send (`MessageTooLarge`, `InvalidAttribute`).
    pub code: String,
    /// Why.
    pub message: String,
    /// Whether the entry itself was at fault, so that sending it again as
    /// it is fails again. False where the service does not say.
    pub sender_fault: bool,
}

/// An entry no answer was had for.
#[derive(Debug, Clone)]
pub struct Unsent {
    /// The caller's name for the entry.
    pub id: String,
    /// What stopped the batch: the same error for every unsent entry.
    pub error: ResourceError,
}

/// What became of one entry of a request, as a backend reads the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntryOutcome {
    /// Taken, with the service's id for it.
    Sent(String),
    /// Refused.
    #[cfg_attr(not(any(feature = "queue", feature = "topic-aws")), allow(dead_code))]
    Refused { code: String, message: String, sender_fault: bool },
    /// Not answered for: the service's answer left it out.
    #[cfg_attr(not(any(feature = "queue-aws", feature = "topic-aws")), allow(dead_code))]
    Unanswered(String),
}

/// How many entries, and how many bytes of them, one request carries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunking {
    pub(crate) max_entries: usize,
    pub(crate) max_bytes: usize,
}

/// Whether a batch of `count` entries may be sent at all.
pub(crate) fn check_count(count: usize) -> Result<(), Fault> {
    if count == 0 {
        return Err(Fault::invalid("EmptyBatch", "the batch has no entries"));
    }
    if count > MAX_BATCH_ENTRIES {
        return Err(Fault::invalid(
            "BatchTooLarge",
            format!("the batch has {count} entries, over the {MAX_BATCH_ENTRIES} one call takes; nothing was sent"),
        ));
    }
    Ok(())
}

/// A batch checked and sent in requests that fit `chunking`. `check` says
/// whether one message may be sent at all (and how large it is); `name`
/// makes a backend's failure the resource's error; `send` sends one
/// request and reads its answer, one outcome per message in order. Fails
/// only when nothing was sent: an empty batch, one over
/// [`MAX_BATCH_ENTRIES`].
pub(crate) async fn send_batch<'e, M, S, F>(
    entries: &'e [BatchEntry<M>],
    chunking: Chunking,
    check: impl Fn(&M) -> Result<usize, Fault>,
    name: impl Fn(Fault) -> ResourceError,
    mut send: S,
) -> Result<BatchResult, ResourceError>
where
    S: FnMut(Vec<&'e M>) -> F,
    F: Future<Output = Result<Vec<EntryOutcome>, Fault>>,
{
    check_count(entries.len()).map_err(&name)?;
    let mut result = BatchResult::default();
    let mut sendable = Vec::with_capacity(entries.len());
    for entry in entries {
        match check(&entry.message) {
            Ok(size) => sendable.push((entry, size)),
            Err(fault) => result.failed.push(Refused {
                id: entry.id.clone(),
                code: fault.code.unwrap_or_default(),
                message: fault.message,
                sender_fault: true,
            }),
        }
    }
    let mut start = 0;
    while start < sendable.len() {
        let mut end = start;
        let mut bytes = 0;
        while end < sendable.len()
            && end - start < chunking.max_entries
            && (end == start || bytes + sendable[end].1 <= chunking.max_bytes)
        {
            bytes += sendable[end].1;
            end += 1;
        }
        let chunk = &sendable[start..end];
        match send(chunk.iter().map(|(entry, _)| &entry.message).collect()).await {
            Ok(outcomes) if outcomes.len() == chunk.len() => {
                for ((entry, _), outcome) in chunk.iter().zip(outcomes) {
                    let id = entry.id.clone();
                    match outcome {
                        EntryOutcome::Sent(message_id) => result.successful.push(Sent { id, message_id }),
                        EntryOutcome::Refused { code, message, sender_fault } => {
                            result.failed.push(Refused { id, code, message, sender_fault })
                        }
                        EntryOutcome::Unanswered(why) => {
                            result.unsent.push(Unsent { id, error: name(Fault::unreachable(why)) })
                        }
                    }
                }
            }
            Ok(outcomes) => {
                let error = name(Fault::unreachable(format!(
                    "the service answered for {} entries of a request of {}",
                    outcomes.len(),
                    chunk.len()
                )));
                unsent(&mut result, &sendable[start..], &error);
                return Ok(result);
            }
            Err(fault) => {
                unsent(&mut result, &sendable[start..], &name(fault));
                return Ok(result);
            }
        }
        start = end;
    }
    Ok(result)
}

fn unsent<M>(result: &mut BatchResult, entries: &[(&BatchEntry<M>, usize)], error: &ResourceError) {
    result.unsent.extend(entries.iter().map(|(entry, _)| Unsent { id: entry.id.clone(), error: error.clone() }));
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::resources::{ResourceErrorKind, ResourceKind};

    fn name(fault: Fault) -> ResourceError {
        ResourceError::new("q", ResourceKind::Queue, "sending a batch to", fault)
    }

    fn entries(sizes: &[usize]) -> Vec<BatchEntry<usize>> {
        sizes.iter().enumerate().map(|(i, size)| BatchEntry::new(format!("e{i}"), *size)).collect()
    }

    fn check(size: &usize) -> Result<usize, Fault> {
        if *size > 100 { Err(Fault::invalid("MessageTooLarge", "too large")) } else { Ok(*size) }
    }

    const CHUNKING: Chunking = Chunking { max_entries: 3, max_bytes: 100 };

    #[tokio::test]
    async fn requests_are_cut_by_count_and_by_bytes_and_every_entry_is_answered_for() {
        let requests = RefCell::new(Vec::new());
        let result = send_batch(&entries(&[10, 10, 10, 10, 60, 50, 101]), CHUNKING, check, name, |chunk| {
            requests.borrow_mut().push(chunk.iter().map(|size| **size).collect::<Vec<_>>());
            let outcomes = chunk.iter().map(|size| EntryOutcome::Sent(format!("m{size}"))).collect();
            async move { Ok(outcomes) }
        })
        .await
        .unwrap();
        assert_eq!(*requests.borrow(), vec![vec![10, 10, 10], vec![10, 60], vec![50]]);
        assert_eq!(result.successful.len(), 6);
        assert_eq!(result.failed.len(), 1);
        assert_eq!(result.failed[0].id, "e6");
        assert!(result.failed[0].sender_fault);
        assert!(!result.is_complete());
    }

    #[tokio::test]
    async fn a_request_that_fails_leaves_its_entries_and_the_rest_unsent() {
        let calls = RefCell::new(0);
        let result = send_batch(&entries(&[1, 2, 3, 4, 5, 6, 7]), CHUNKING, check, name, |chunk| {
            *calls.borrow_mut() += 1;
            let first = *calls.borrow() == 1;
            let outcomes: Vec<_> = chunk.iter().map(|_| EntryOutcome::Sent("m".into())).collect();
            async move { if first { Ok(outcomes) } else { Err(Fault::unreachable("connection reset")) } }
        })
        .await
        .unwrap();
        assert_eq!(*calls.borrow(), 2);
        assert_eq!(result.successful.iter().map(|sent| sent.id.as_str()).collect::<Vec<_>>(), ["e0", "e1", "e2"]);
        assert_eq!(result.unsent.iter().map(|unsent| unsent.id.as_str()).collect::<Vec<_>>(), ["e3", "e4", "e5", "e6"]);
        assert_eq!(result.unsent[0].error.kind(), ResourceErrorKind::Unreachable);
        assert!(result.unsent[0].error.to_string().contains("connection reset"));
    }

    #[tokio::test]
    async fn an_answer_that_leaves_entries_out_leaves_them_unsent() {
        let result = send_batch(&entries(&[1, 2]), CHUNKING, check, name, |_| async {
            Ok(vec![EntryOutcome::Sent("m".into()), EntryOutcome::Unanswered("SQS said nothing of it".into())])
        })
        .await
        .unwrap();
        assert_eq!(result.successful.len(), 1);
        assert_eq!(result.unsent[0].id, "e1");

        let result = send_batch(&entries(&[1, 2]), CHUNKING, check, name, |_| async {
            Ok(vec![EntryOutcome::Sent("m".into())])
        })
        .await
        .unwrap();
        assert_eq!(result.unsent.len(), 2, "an answer of the wrong length answers for none");
    }

    #[tokio::test]
    async fn an_empty_batch_and_one_over_the_limit_are_refused_before_sending() {
        let never = |_: Vec<&usize>| async { panic!("nothing may be sent") };
        let error = send_batch(&entries(&[]), CHUNKING, check, name, never).await.unwrap_err();
        assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("EmptyBatch")));
        let error = send_batch(&entries(&[1; 1000]), CHUNKING, check, name, never).await.unwrap_err();
        assert_eq!(error.code(), Some("BatchTooLarge"));
        assert!(error.to_string().contains("1000 entries"), "{error}");
    }
}
