//! Orders, the price list, and the rules a new order must follow.
//!
//! Nothing here knows about Celerity: these are the service's own types, which
//! the handlers translate into and out of events.

use std::collections::BTreeMap;
use std::fmt;

use celerity::http::PathSegment;
use serde::{Deserialize, Serialize};

/// Where an order is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Placed, not paid yet.
    Pending,
    /// Paid, waiting to be shipped.
    Paid,
    /// On its way; it can no longer change.
    Shipped,
    /// Cancelled; the nightly cleanup removes it once it is old enough.
    Cancelled,
}

impl Status {
    /// Whether an order may go from `self` to `next`. Staying put is allowed,
    /// so that an event delivered twice changes nothing the second time.
    pub fn can_become(self, next: Status) -> bool {
        use Status::*;
        self == next || matches!((self, next), (Pending, Paid) | (Pending | Paid, Cancelled) | (Paid, Shipped))
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Status::Pending => "pending",
            Status::Paid => "paid",
            Status::Shipped => "shipped",
            Status::Cancelled => "cancelled",
        };
        f.write_str(name)
    }
}

/// An order as the service keeps it (one datastore item) and answers with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    /// `ord-1`, `ord-2`, ...
    pub id: String,
    /// Who placed it.
    pub customer: String,
    /// What was ordered, priced when the order was placed.
    pub items: Vec<Line>,
    /// Free-form labels to filter on, such as `gift` or `express`.
    pub tags: Vec<String>,
    /// Where the order is in its life.
    pub status: Status,
    /// The sum of the lines.
    pub total_cents: u64,
    /// Goes up by one with every change; subscribers see it in each update.
    pub version: u64,
    /// When it was placed, in Unix milliseconds.
    pub created_at_ms: u64,
    /// When it was cancelled, in Unix milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancelled_at_ms: Option<u64>,
    /// When its `placed` event came back from the `order-events` queue, in
    /// Unix milliseconds: the order is confirmed once the announcement of it
    /// has been through the queue and its consumer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmed_at_ms: Option<u64>,
}

/// One priced line of an order or a quote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Line {
    /// The catalogue's product code.
    pub sku: String,
    /// How many.
    pub quantity: u32,
    /// The catalogue price of one.
    pub unit_price_cents: u64,
    /// `quantity × unit_price_cents`.
    pub line_total_cents: u64,
}

/// The body of `POST /orders`.
///
/// Unknown fields are refused, and a field of the wrong type is named by the
/// SDK before the handler runs (`400` with `details[].path`, such as
/// `["items", 0, "quantity"]`). The rules JSON cannot express are checked by
/// [`validate_items`].
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewOrder {
    /// Who places it; not blank.
    pub customer: String,
    /// At least one.
    pub items: Vec<NewItem>,
    /// Optional labels.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// One line of a new order or a quote request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewItem {
    /// A product code from the catalogue.
    pub sku: String,
    /// At least 1.
    pub quantity: u32,
}

/// A rule an input broke: where, and why. It becomes one `details` entry of
/// an HTTP 400, or a sentence of a custom handler's error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The path of the offending field, such as `items[1].quantity`.
    pub path: Vec<PathSegment>,
    /// What is wrong with it.
    pub message: String,
}

impl Problem {
    fn new(path: Vec<PathSegment>, message: impl Into<String>) -> Self {
        Problem { path, message: message.into() }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut path = String::new();
        for segment in &self.path {
            match segment {
                PathSegment::Key(key) if path.is_empty() => path.push_str(key),
                PathSegment::Key(key) => {
                    path.push('.');
                    path.push_str(key);
                }
                PathSegment::Index(index) => path.push_str(&format!("[{index}]")),
            }
        }
        write!(f, "`{path}`: {}", self.message)
    }
}

/// Checks the lines of a new order or a quote: at least one, each a known
/// product, each quantity at least 1. Every problem is reported, not just the
/// first, each naming its field.
pub fn validate_items(items: &[NewItem], catalog: &Catalog) -> Vec<Problem> {
    let mut problems = Vec::new();
    if items.is_empty() {
        problems.push(Problem::new(vec!["items".into()], "an order has at least one item"));
    }
    for (index, item) in items.iter().enumerate() {
        if catalog.price(&item.sku).is_none() {
            problems.push(Problem::new(
                vec!["items".into(), index.into(), "sku".into()],
                format!("unknown product {:?}; the catalogue has {}", item.sku, catalog.skus().join(", ")),
            ));
        }
        if item.quantity < 1 {
            problems.push(Problem::new(
                vec!["items".into(), index.into(), "quantity".into()],
                "the quantity is at least 1",
            ));
        }
    }
    problems
}

/// Checks a new order: its lines ([`validate_items`]) and its customer.
pub fn validate_order(order: &NewOrder, catalog: &Catalog) -> Vec<Problem> {
    let mut problems = Vec::new();
    if order.customer.trim().is_empty() {
        problems.push(Problem::new(vec!["customer".into()], "the customer is not blank"));
    }
    problems.extend(validate_items(&order.items, catalog));
    for (index, tag) in order.tags.iter().enumerate() {
        if tag.trim().is_empty() {
            problems.push(Problem::new(vec!["tags".into(), index.into()], "a tag is not blank"));
        }
    }
    problems
}

/// The products on sale and their prices. Shared with every handler as
/// `State<Catalog>`.
#[derive(Debug)]
pub struct Catalog {
    prices: BTreeMap<&'static str, u64>,
}

impl Catalog {
    /// The coffee bar's price list.
    pub fn standard() -> Self {
        Catalog { prices: BTreeMap::from([("espresso", 250), ("latte", 350), ("croissant", 300), ("beans-1kg", 2400)]) }
    }

    /// The price of one `sku`, if it is on sale.
    pub fn price(&self, sku: &str) -> Option<u64> {
        self.prices.get(sku).copied()
    }

    /// Every product code, in order.
    pub fn skus(&self) -> Vec<&'static str> {
        self.prices.keys().copied().collect()
    }

    /// Prices lines that [`validate_items`] accepted.
    pub fn price_lines(&self, items: &[NewItem]) -> Vec<Line> {
        items
            .iter()
            .map(|item| {
                let unit_price_cents = self.price(&item.sku).unwrap_or(0);
                Line {
                    sku: item.sku.clone(),
                    quantity: item.quantity,
                    unit_price_cents,
                    line_total_cents: unit_price_cents.saturating_mul(u64::from(item.quantity)),
                }
            })
            .collect()
    }
}

/// Now, in Unix milliseconds.
pub fn now_ms() -> u64 {
    let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(sku: &str, quantity: u32) -> NewItem {
        NewItem { sku: sku.to_string(), quantity }
    }

    #[test]
    fn transitions() {
        assert!(Status::Pending.can_become(Status::Paid));
        assert!(Status::Paid.can_become(Status::Paid));
        assert!(Status::Paid.can_become(Status::Cancelled));
        assert!(!Status::Shipped.can_become(Status::Cancelled));
        assert!(!Status::Cancelled.can_become(Status::Paid));
        assert!(!Status::Pending.can_become(Status::Shipped));
    }

    #[test]
    fn every_problem_names_its_field() {
        let catalog = Catalog::standard();
        let problems = validate_items(&[item("latte", 1), item("tea", 0)], &catalog);
        let paths: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 2, "{paths:?}");
        assert!(paths[0].starts_with("`items[1].sku`: unknown product \"tea\""), "{paths:?}");
        assert_eq!(paths[1], "`items[1].quantity`: the quantity is at least 1");
        assert_eq!(validate_items(&[], &catalog)[0].path, vec![PathSegment::from("items")]);
    }

    #[test]
    fn prices_lines() {
        let lines = Catalog::standard().price_lines(&[item("latte", 2)]);
        assert_eq!(lines[0].line_total_cents, 700);
    }
}
