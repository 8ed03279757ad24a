//! An HTTP request decoded from its bytes straight into a [`Request`].
//!
//! Decoded as `pb::HttpRequest` and then converted, a request's method,
//! path, route, source address and id, and every header's name and each of
//! its values, are copied into a `String` of their own, and each header's
//! values into a `Vec` of `String`s: for a request with ten headers, some
//! thirty allocations made and freed per event. Here the text goes into the
//! worker's arena ([`Text`]) instead.
//!
//! It is the same decoding: `merge_field` is the one prost generates for
//! `HttpRequest` and `Values`, field for field, on prost's own primitives
//! (its map decoding included), and an error is prost's, naming the same
//! fields. The SDK's tests and its `event` fuzz target compare the two.

use std::collections::HashMap;

use bytes::Bytes;
use celerity_proto::v1 as pb;
use prost::{DecodeError, Message};

use super::{HttpError, Request};
use crate::text::Text;
use crate::text::proto::wire_message;

/// `HttpRequest`, its text in the arena.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct WireRequest {
    pub(super) method: Text,
    pub(super) path: Text,
    pub(super) route: Text,
    pub(super) path_params: HashMap<Text, WireValues>,
    pub(super) query_params: HashMap<Text, WireValues>,
    pub(super) headers: HashMap<Text, WireValues>,
    pub(super) source_ip: Text,
    pub(super) request_id: Text,
    pub(super) body: Bytes,
}

/// `Values`: a parameter's or a header's values, in order.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct WireValues(pub(crate) Vec<Text>);

impl Request {
    /// The request whose `HttpRequest` message is `bytes`: the bytes do not
    /// decode (prost's error, in prost's words), or they do and the request
    /// is what [`Request::from_wire`] makes of them (an invalid method is a
    /// 400, as there).
    pub(crate) fn decode(bytes: Bytes) -> Result<Result<Request, HttpError>, DecodeError> {
        let mut wire = WireRequest::default();
        wire.merge(bytes)?;
        Ok(Request::from_decoded(wire))
    }
}

impl From<pb::HttpRequest> for WireRequest {
    fn from(request: pb::HttpRequest) -> Self {
        let map = |map: HashMap<String, pb::Values>| {
            map.into_iter()
                .map(|(name, values)| {
                    (Text::from(name), WireValues(values.values.into_iter().map(Text::from).collect()))
                })
                .collect()
        };
        WireRequest {
            method: Text::from(request.method),
            path: Text::from(request.path),
            route: Text::from(request.route),
            path_params: map(request.path_params),
            query_params: map(request.query_params),
            headers: map(request.headers),
            source_ip: Text::from(request.source_ip),
            request_id: Text::from(request.request_id),
            body: request.body,
        }
    }
}

// `Values`: every value, even an empty one, as a repeated field is written.
wire_message!(WireValues, "Values" { 1 => 0 ("values"): texts });

wire_message!(WireRequest, "HttpRequest" {
    1 => method: text,
    2 => path: text,
    3 => route: text,
    4 => path_params: message_map,
    5 => query_params: message_map,
    6 => headers: message_map,
    7 => source_ip: text,
    8 => request_id: text,
    9 => body: bytes,
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::__private::http::parts;
    use crate::text::proto::tests::field;

    /// Decoded straight into a request, and through prost's `HttpRequest`,
    /// `bytes` give the same request, the same refusal, or the same error.
    fn same_both_ways(bytes: &[u8]) {
        let direct = Request::decode(Bytes::copy_from_slice(bytes));
        let through_prost = pb::HttpRequest::decode(bytes).map(Request::from_wire);
        match (direct, through_prost) {
            (Ok(Ok(direct)), Ok(Ok(through_prost))) => assert_eq!(parts(&direct), parts(&through_prost)),
            (Ok(Err(direct)), Ok(Err(through_prost))) => assert_eq!(direct.to_string(), through_prost.to_string()),
            (Err(direct), Err(through_prost)) => assert_eq!(direct.to_string(), through_prost.to_string()),
            (direct, through_prost) => panic!("decoded straight: {direct:?}; through prost: {through_prost:?}"),
        }
    }

    fn values(values: &[&str]) -> pb::Values {
        pb::Values { values: values.iter().map(|value| value.to_string()).collect() }
    }

    fn request() -> pb::HttpRequest {
        pb::HttpRequest {
            method: "POST".into(),
            path: "/orders/a%20b/items".into(),
            route: "/orders/{id}/items".into(),
            path_params: HashMap::from([("id".to_string(), values(&["a b"]))]),
            query_params: HashMap::from([("tag".to_string(), values(&["x", "y", ""])), ("n".into(), values(&["1"]))]),
            headers: HashMap::from([
                ("content-type".to_string(), values(&["application/json"])),
                ("x-many".to_string(), values(&["1", "2"])),
                ("x-naïve".to_string(), values(&["ü"])),
            ]),
            source_ip: "10.1.2.3".into(),
            request_id: "req-1".into(),
            body: Bytes::from_static(b"{\"a\":1}"),
        }
    }

    #[test]
    fn a_request_decodes_to_what_prost_decodes() {
        let bytes = request().encode_to_vec();
        same_both_ways(&bytes);
        let decoded = Request::decode(Bytes::from(bytes)).unwrap().unwrap();
        assert_eq!(decoded.method(), "POST");
        assert_eq!(decoded.route(), "/orders/{id}/items");
        assert_eq!(decoded.path_params().get("id"), Some("a b"));
        assert_eq!(decoded.headers().get_all("x-many").iter().count(), 2);
        assert_eq!(decoded.header_text(&http::header::CONTENT_TYPE), Some("application/json"));
        assert_eq!(decoded.source_ip(), Some("10.1.2.3".parse().unwrap()));
        same_both_ways(&[]);
        same_both_ways(&pb::HttpRequest { method: "GET".into(), ..Default::default() }.encode_to_vec());
    }

    #[test]
    fn a_method_that_is_not_http_is_refused_as_from_wire_refuses_it() {
        for method in ["", "BAD METHOD", "GÉT"] {
            let bytes = pb::HttpRequest { method: method.into(), ..request() }.encode_to_vec();
            same_both_ways(&bytes);
            assert!(Request::decode(Bytes::from(bytes)).unwrap().is_err());
        }
    }

    #[test]
    fn fields_repeated_unknown_or_malformed_decode_as_prost_decodes_them() {
        let entry = |key: &[u8], value: &[u8]| [field(1, key), field(2, &field(1, value))].concat();
        let cases: Vec<Vec<u8>> = vec![
            // A text field given twice: the last one.
            [field(1, b"GET"), field(1, b"PUT")].concat(),
            // A header given twice: the last entry's values.
            [field(6, &entry(b"x-a", b"1")), field(6, &entry(b"x-a", b"2"))].concat(),
            // Header names in two spellings, merged in the map.
            [field(1, b"GET"), field(6, &entry(b"X-A", b"1")), field(6, &entry(b"x-a", b"2"))].concat(),
            // An entry with no key, no value, or fields of its own.
            [field(1, b"GET"), field(6, &field(2, &field(1, b"v"))), field(6, &field(1, b"k"))].concat(),
            [field(1, b"GET"), field(6, &[entry(b"k", b"v"), field(3, b"x")].concat())].concat(),
            // Text that is not UTF-8, at every level.
            field(2, b"\xff"),
            field(6, &entry(b"\xff", b"v")),
            field(6, &entry(b"k", b"\xfe")),
            // A map field of the wrong wire type; an entry cut short.
            vec![0x30, 0x01],
            field(6, &[0x0a, 0x05, b'k']),
            // A value message of the wrong wire type.
            field(6, &[field(1, b"k"), vec![0x10, 0x01]].concat()),
            // Unknown fields, skipped.
            [field(1, b"GET"), field(15, b"x"), vec![0x50, 0x01]].concat(),
            // A length past the end; a group that never ends.
            vec![0x0a, 0x20, b'G'],
            vec![0x0b],
        ];
        for bytes in cases {
            same_both_ways(&bytes);
        }
    }

    #[test]
    fn encoding_gives_back_the_bytes_prost_would_write() {
        let wire = pb::HttpRequest { headers: HashMap::from([("k".to_string(), values(&["v"]))]), ..request() };
        let wire = pb::HttpRequest { path_params: HashMap::new(), query_params: HashMap::new(), ..wire };
        let bytes = Bytes::from(wire.encode_to_vec());
        let mut direct = WireRequest::default();
        direct.merge(bytes.clone()).unwrap();
        assert_eq!(direct.encode_to_vec(), bytes);
        assert_eq!(direct.encoded_len(), bytes.len());
        assert_eq!(direct, WireRequest::from(wire));
    }
}
