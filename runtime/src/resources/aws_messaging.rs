//! What SQS and SNS share: attributes as their requests carry them, and
//! the answer to a batch read back onto its entries.

use std::collections::{BTreeMap, HashMap};

use aws_smithy_types::error::operation::BuildError;

use super::aws_fault::unbuilt;
use super::batch::EntryOutcome;
use super::error::Fault;

/// A message's attributes as the service's request carries them, each
/// value made by `build` (of the service's own type), or none.
pub(crate) fn attributes<V>(
    attributes: &BTreeMap<String, String>,
    build: impl Fn(&str) -> Result<V, BuildError>,
) -> Result<Option<HashMap<String, V>>, Fault> {
    if attributes.is_empty() {
        return Ok(None);
    }
    let built: Result<HashMap<String, V>, BuildError> =
        attributes.iter().map(|(name, value)| Ok((name.clone(), build(value)?))).collect();
    built.map(Some).map_err(unbuilt)
}

/// An entry of a batch request is named by its place in the request: SQS
/// and SNS want ids unique within it and of a narrow alphabet, which the
/// caller's own names need not be.
pub(crate) fn entry_id(place: usize) -> String {
    place.to_string()
}

/// What became of each of `count` entries, from the service's answer:
/// the entries it took (`(id, message id)`) and those it refused (`(id,
/// code, message, sender's fault)`). An entry the answer leaves out is
/// unanswered, never taken for sent.
pub(crate) fn outcomes<'a>(
    count: usize,
    service: &str,
    sent: impl IntoIterator<Item = (&'a str, &'a str)>,
    refused: impl IntoIterator<Item = (&'a str, &'a str, Option<&'a str>, bool)>,
) -> Vec<EntryOutcome> {
    let mut outcomes: Vec<EntryOutcome> = (0..count)
        .map(|_| EntryOutcome::Unanswered(format!("{service}'s answer to the batch said nothing of this entry")))
        .collect();
    let mut place = |id: &str, outcome: EntryOutcome| {
        if let Some(slot) = id.parse::<usize>().ok().and_then(|place| outcomes.get_mut(place)) {
            *slot = outcome;
        }
    };
    for (id, message_id) in sent {
        place(id, EntryOutcome::Sent(message_id.to_string()));
    }
    for (id, code, message, sender_fault) in refused {
        let refused = EntryOutcome::Refused {
            code: code.to_string(),
            message: message.unwrap_or_default().to_string(),
            sender_fault,
        };
        place(id, refused);
    }
    outcomes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_placed_by_id_and_an_entry_left_out_is_unanswered() {
        let outcomes = outcomes(
            3,
            "SQS",
            [("2", "m-2"), ("x", "m-x"), ("9", "m-9")],
            [("0", "InvalidParameterValue", Some("bad"), true)],
        );
        assert_eq!(
            outcomes[0],
            EntryOutcome::Refused { code: "InvalidParameterValue".into(), message: "bad".into(), sender_fault: true }
        );
        assert!(matches!(&outcomes[1], EntryOutcome::Unanswered(why) if why.contains("SQS")));
        assert_eq!(outcomes[2], EntryOutcome::Sent("m-2".into()));
    }
}
