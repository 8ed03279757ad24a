//! Quotes: a custom handler, invoked by name with typed JSON in and out.
//!
//! Invalid input is answered on purpose with a [`CustomError`], whose message
//! the invoker reads as the result's `error_message`. Input that does not fit
//! `QuoteRequest` is answered the same way by the SDK, naming the field.
//! A panic (see [`crate::chaos`]) would instead be a `HandlerError`.
//!
//! The coupons come from the application's configuration ([`Pricing`]), as
//! the blueprint's `ordersConfig` store declares them.

use std::collections::BTreeMap;

use celerity::config::Config;
use celerity::custom::CustomError;
use celerity::{Json, State, custom_handler};
use serde::{Deserialize, Serialize};

use crate::chaos;
use crate::model::{Catalog, Line, NewItem, validate_items};

/// What to quote: the lines of a prospective order, and a coupon code.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct QuoteRequest {
    items: Vec<NewItem>,
    coupon: Option<String>,
}

/// The price of a prospective order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Quote {
    lines: Vec<Line>,
    subtotal_cents: u64,
    discount_cents: u64,
    total_cents: u64,
}

/// The pricing configuration: the coupons on offer, by code, each a
/// discount in percent, from the keys `coupons_<CODE>` (or `coupons/<CODE>`).
/// Without any, the standard two.
#[derive(Debug, Deserialize)]
pub struct Pricing {
    #[serde(default = "standard_coupons")]
    coupons: BTreeMap<String, u64>,
}

fn standard_coupons() -> BTreeMap<String, u64> {
    [("WELCOME10".to_string(), 10), ("STAFF50".to_string(), 50)].into()
}

/// `custom::quoteOrder`: prices the lines with the catalogue and applies the
/// coupon.
#[custom_handler("custom::quoteOrder")]
async fn quote_order(
    catalog: State<Catalog>,
    pricing: Config<Pricing>,
    Json(request): Json<QuoteRequest>,
) -> Result<Json<Quote>, CustomError> {
    let problems = validate_items(&request.items, &catalog);
    if !problems.is_empty() {
        let sentences: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(CustomError::new(format!("the quote request is not valid: {}", sentences.join("; "))));
    }
    let percent = match request.coupon.as_deref() {
        None => 0,
        Some(code) => {
            chaos::strike("quote_order", code);
            let percent = pricing.coupons.get(code).copied();
            percent.ok_or_else(|| CustomError::new(format!("unknown coupon {code:?}")))?
        }
    };
    let lines = catalog.price_lines(&request.items);
    let subtotal_cents = lines.iter().map(|line| line.line_total_cents).fold(0u64, u64::saturating_add);
    // A coupon of more than 100 % gives the order away, no more.
    let discount_cents = subtotal_cents.saturating_mul(percent.min(100)) / 100;
    Ok(Json(Quote { lines, subtotal_cents, discount_cents, total_cents: subtotal_cents - discount_cents }))
}
