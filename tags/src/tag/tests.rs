//! The tag grammar's cases, accepted and refused.

use super::*;

fn ok(kind: TagKind, tag: &str) -> NormalisedTag {
    parse_tag(kind, tag).unwrap_or_else(|e| panic!("{tag:?} should be a valid {kind} tag: {e}"))
}

fn err(kind: TagKind, tag: &str) -> TagError {
    match parse_tag(kind, tag) {
        Ok(t) => panic!("{tag:?} should not be a valid {kind} tag, got {t:?}"),
        Err(e) => e,
    }
}

#[test]
fn http_tags() {
    assert_eq!(ok(TagKind::Http, "GET::/orders").tag, "GET::/orders");
    assert_eq!(ok(TagKind::Http, "GET::/").tag, "GET::/");
    let t = ok(TagKind::Http, "POST::/orders/{id}/items");
    assert_eq!(t.tag, "POST::/orders/{id}/items");
    assert_eq!(t.params, ["id"]);
    let t = ok(TagKind::Http, "GET::/a/{a_1}/b/{_b}/{Cc}");
    assert_eq!(t.params, ["a_1", "_b", "Cc"]);
    for method in HTTP_METHODS {
        ok(TagKind::Http, &format!("{method}::/x"));
    }
    // Trailing slashes and literal segments with punctuation are routes too.
    ok(TagKind::Http, "GET::/orders/");
    ok(TagKind::Http, "GET::/v1.0/health-check");
}

#[test]
fn http_catch_all_is_normalised() {
    let t = ok(TagKind::Http, "GET::/files/{path+}");
    assert_eq!(t.tag, "GET::/files/{*path}");
    assert_eq!(t.params, ["path"]);
    assert_eq!(ok(TagKind::Http, "GET::/files/{*path}").tag, "GET::/files/{*path}");
    assert_eq!(ok(TagKind::Http, "GET::/{id}/{rest+}").tag, "GET::/{id}/{*rest}");
}

#[test]
fn http_method_case() {
    let e = err(TagKind::Http, "get::/hello");
    assert_eq!(e.code, TagErrorCode::LowercaseMethod);
    assert_eq!(e.suggestion.as_deref(), Some("GET::/hello"));
    assert!(e.message.contains("upper case"), "{e}");
    let e = err(TagKind::Http, "Delete::/orders/{id}");
    assert_eq!(e.suggestion.as_deref(), Some("DELETE::/orders/{id}"));
    // The suggestion fixes the route too.
    assert_eq!(err(TagKind::Http, "get::orders").suggestion.as_deref(), Some("GET::/orders"));
    assert_eq!(err(TagKind::Http, "post::/files/{p+}").suggestion.as_deref(), Some("POST::/files/{*p}"));
    assert_eq!(err(TagKind::Http, "get::/a/{x").suggestion, None, "no suggestion that is still wrong");
}

#[test]
fn http_unknown_method() {
    let e = err(TagKind::Http, "FETCH::/x");
    assert_eq!(e.code, TagErrorCode::UnknownMethod);
    assert!(e.message.contains("GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"), "{e}");
    assert_eq!(err(TagKind::Http, "::/x").code, TagErrorCode::UnknownMethod);
}

#[test]
fn http_form() {
    let e = err(TagKind::Http, "/hello");
    assert_eq!(e.code, TagErrorCode::Form);
    assert_eq!(e.suggestion.as_deref(), Some("GET::/hello"));
    assert_eq!(err(TagKind::Http, "hello").code, TagErrorCode::Form);
    let e = err(TagKind::Http, "GET /hello");
    assert_eq!(e.code, TagErrorCode::Whitespace);
    assert_eq!(e.suggestion.as_deref(), Some("GET::/hello"));
}

#[test]
fn http_route_must_be_absolute() {
    let e = err(TagKind::Http, "GET::hello");
    assert_eq!(e.code, TagErrorCode::RouteNotAbsolute);
    assert_eq!(e.suggestion.as_deref(), Some("GET::/hello"));
    let e = err(TagKind::Http, "GET:::hello");
    assert_eq!(e.suggestion.as_deref(), Some("GET::/hello"));
    assert_eq!(err(TagKind::Http, "GET::").code, TagErrorCode::RouteNotAbsolute);
}

#[test]
fn http_route_has_no_query() {
    let e = err(TagKind::Http, "GET::/orders?page=1");
    assert_eq!(e.code, TagErrorCode::RouteQuery);
    assert_eq!(e.suggestion.as_deref(), Some("GET::/orders"));
    assert_eq!(err(TagKind::Http, "GET::/orders#top").code, TagErrorCode::RouteQuery);
}

#[test]
fn http_params() {
    for bad in ["GET::/{}", "GET::/{1id}", "GET::/{order-id}", "GET::/{_}", "GET::/{*}", "GET::/{+}", "GET::/{a b}"] {
        let e = err(TagKind::Http, bad);
        assert!(matches!(e.code, TagErrorCode::BadParam | TagErrorCode::Whitespace), "{bad}: {e:?}");
    }
    for bad in ["GET::/x{id}", "GET::/{id}x", "GET::/{id", "GET::/id}", "GET::/{{id}}", "GET::/{a}{b}"] {
        let e = err(TagKind::Http, bad);
        assert_eq!(e.code, TagErrorCode::BadParam, "{bad}: {e:?}");
        assert!(e.message.contains("whole path segment"), "{e}");
    }
}

#[test]
fn http_catch_all_only_last() {
    let e = err(TagKind::Http, "GET::/{*path}/x");
    assert_eq!(e.code, TagErrorCode::CatchAllNotLast);
    assert!(e.message.contains("`{*path}`"), "{e}");
    let e = err(TagKind::Http, "GET::/{path+}/");
    assert_eq!(e.code, TagErrorCode::CatchAllNotLast);
    assert!(e.message.contains("`{path+}`"), "{e}");
}

#[test]
fn http_duplicate_params() {
    let e = err(TagKind::Http, "GET::/{id}/items/{id}");
    assert_eq!(e.code, TagErrorCode::DuplicateParam);
    assert!(e.message.contains("`{id}`"), "{e}");
    assert_eq!(err(TagKind::Http, "GET::/{id}/{id+}").code, TagErrorCode::DuplicateParam);
}

#[test]
fn websocket_tags() {
    for tag in ["event::$connect", "event::$disconnect", "event::$default", "action::sendMessage"] {
        assert_eq!(ok(TagKind::WebSocket, tag).tag, tag);
    }
    let e = err(TagKind::WebSocket, "$connect");
    assert_eq!(e.code, TagErrorCode::Form);
    assert_eq!(e.suggestion.as_deref(), Some("event::$connect"));
    let e = err(TagKind::WebSocket, "event::$Connect");
    assert_eq!(e.code, TagErrorCode::UnknownSpecialRoute);
    assert_eq!(e.suggestion.as_deref(), Some("event::$connect"));
    let e = err(TagKind::WebSocket, "event::$open");
    assert_eq!(e.code, TagErrorCode::UnknownSpecialRoute);
    assert_eq!(e.suggestion, None);
    assert_eq!(err(TagKind::WebSocket, "::$connect").code, TagErrorCode::EmptyPart);
    assert_eq!(err(TagKind::WebSocket, "event::").code, TagErrorCode::EmptyPart);
    assert_eq!(err(TagKind::WebSocket, "event::a::b").code, TagErrorCode::Form);
}

#[test]
fn source_tags() {
    for kind in [TagKind::Consumer, TagKind::Schedule] {
        assert_eq!(ok(kind, "source::orders-queue::processOrders").tag, "source::orders-queue::processOrders");
        let e = err(kind, "orders-queue::processOrders");
        assert_eq!(e.code, TagErrorCode::Form);
        assert_eq!(e.suggestion.as_deref(), Some("source::orders-queue::processOrders"));
        let e = err(kind, "Source::q::h");
        assert_eq!(e.suggestion.as_deref(), Some("source::q::h"));
        assert_eq!(err(kind, "source::q").code, TagErrorCode::Form);
        assert_eq!(err(kind, "source::q::h::x").code, TagErrorCode::Form);
        assert_eq!(err(kind, "source::::h").code, TagErrorCode::EmptyPart);
        assert_eq!(err(kind, "source::q::").code, TagErrorCode::EmptyPart);
        assert_eq!(err(kind, "processOrders").code, TagErrorCode::Form);
    }
}

#[test]
fn custom_tags() {
    assert_eq!(ok(TagKind::Custom, "custom::resizeImage").tag, "custom::resizeImage");
    let e = err(TagKind::Custom, "resizeImage");
    assert_eq!(e.code, TagErrorCode::Form);
    assert_eq!(e.suggestion.as_deref(), Some("custom::resizeImage"));
    assert_eq!(err(TagKind::Custom, "Custom::x").suggestion.as_deref(), Some("custom::x"));
    assert_eq!(err(TagKind::Custom, "custom::").code, TagErrorCode::EmptyPart);
    assert_eq!(err(TagKind::Custom, "custom::a::b").code, TagErrorCode::Form);
}

#[test]
fn a_tag_of_another_kind_names_the_right_attribute() {
    let cases: [(TagKind, &str, &str); 9] = [
        (TagKind::Consumer, "event::$connect", "`#[websocket_handler]`"),
        (TagKind::Http, "source::orders::process", "`#[consumer]` or `#[schedule_handler]`"),
        (TagKind::Http, "custom::resize", "`#[custom_handler]`"),
        (TagKind::Http, "event::$connect", "`#[websocket_handler]`"),
        (TagKind::WebSocket, "GET::/orders", "`#[http_handler]`"),
        (TagKind::WebSocket, "source::q::h", "`#[consumer]` or `#[schedule_handler]`"),
        (TagKind::Consumer, "POST::/orders", "`#[http_handler]`"),
        (TagKind::Custom, "source::q::h", "`#[consumer]` or `#[schedule_handler]`"),
        (TagKind::Schedule, "custom::x", "`#[custom_handler]`"),
    ];
    for (kind, tag, attribute) in cases {
        let e = err(kind, tag);
        assert_eq!(e.code, TagErrorCode::WrongKind, "{tag} on {kind}: {e}");
        assert!(e.message.contains(attribute), "{tag} on {kind}: {e}");
        assert!(e.message.contains(kind.form()), "{tag} on {kind}: {e}");
    }
}

#[test]
fn empty_and_whitespace() {
    for kind in TagKind::ALL {
        let e = err(kind, "");
        assert_eq!(e.code, TagErrorCode::Empty);
        assert!(e.message.contains(kind.form()), "{e}");
        let e = err(kind, &format!(" {} ", kind.example()));
        assert_eq!(e.code, TagErrorCode::Whitespace);
        assert_eq!(e.suggestion.as_deref(), Some(kind.example()));
    }
    assert_eq!(err(TagKind::Http, "GET::/a\tb").code, TagErrorCode::Whitespace);
}

#[test]
fn every_example_is_valid_and_suggestions_parse() {
    for kind in TagKind::ALL {
        ok(kind, kind.example());
    }
    let broken = [
        (TagKind::Http, "get::/x"),
        (TagKind::Http, "/x"),
        (TagKind::Http, "GET::x"),
        (TagKind::Http, "GET::/x?y"),
        (TagKind::WebSocket, "$connect"),
        (TagKind::WebSocket, "event::$DEFAULT"),
        (TagKind::Consumer, "q::h"),
        (TagKind::Custom, "x"),
    ];
    for (kind, tag) in broken {
        let suggestion = err(kind, tag).suggestion.unwrap_or_else(|| panic!("{tag}: no suggestion"));
        ok(kind, &suggestion);
    }
}

#[test]
fn display_appends_the_suggestion() {
    let e = err(TagKind::Http, "get::/x");
    assert_eq!(e.to_string(), format!("{}: write `GET::/x`", e.message));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn kind() -> impl Strategy<Value = TagKind> {
        prop::sample::select(TagKind::ALL.to_vec())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn never_panics_and_normalises_idempotently(kind in kind(), tag in "\\PC{0,40}") {
            if let Ok(t) = parse_tag(kind, &tag) {
                prop_assert_eq!(parse_tag(kind, &t.tag), Ok(t.clone()));
            }
        }

        #[test]
        fn tag_shaped_inputs(
            kind in kind(),
            tag in "(GET|get|POST|source|custom|event|x)?(::)?(/|\\$)?([a-z{}*+_/:$]{0,6}){0,4}",
        ) {
            match parse_tag(kind, &tag) {
                Ok(t) => prop_assert_eq!(parse_tag(kind, &t.tag), Ok(t.clone())),
                Err(e) => {
                    prop_assert!(!e.message.is_empty());
                    if let Some(s) = &e.suggestion {
                        prop_assert_ne!(s, &tag);
                    }
                }
            }
        }

        #[test]
        fn valid_http_routes(
            method in prop::sample::select(HTTP_METHODS.to_vec()),
            segments in prop::collection::vec("[a-z]{1,5}|\\{[a-z][a-z0-9_]{0,5}\\}", 0..5),
        ) {
            let mut seen = std::collections::HashSet::new();
            let unique = segments.iter().filter(|s| s.starts_with('{')).all(|s| seen.insert(s.clone()));
            let tag = format!("{method}::/{}", segments.join("/"));
            let parsed = parse_tag(TagKind::Http, &tag);
            if unique {
                prop_assert_eq!(parsed.map(|t| t.tag), Ok(tag));
            } else {
                prop_assert_eq!(parsed.map_err(|e| e.code), Err(TagErrorCode::DuplicateParam));
            }
        }
    }
}
