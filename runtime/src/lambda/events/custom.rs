//! A direct invocation as the runtime's `CustomInvoke`: the payload, as
//! sent, is the input, JSON or not.

use celerity_proto::v1::CustomInvoke;

use super::Invocation;

pub(super) fn read(invocation: &Invocation<'_>) -> CustomInvoke {
    let handler_name = invocation.tag.strip_prefix("custom::").unwrap_or(invocation.tag).to_string();
    CustomInvoke { handler_name, input: invocation.raw.clone() }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    #[test]
    fn the_payload_is_the_input_as_sent() {
        let raw = Bytes::from_static(b"\xff not JSON at all");
        let invoke = read(&Invocation { raw: &raw, json: None, tag: "custom::quoteOrder", request_id: "r" });
        assert_eq!((invoke.handler_name.as_str(), invoke.input), ("quoteOrder", raw));
    }
}
