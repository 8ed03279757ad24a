//! Receipts: a text file per confirmed order, written to the blueprint's
//! `receiptsBucket` bucket as `receipts/<order id>.txt`.
//!
//! `process_order_event` writes the receipt when it confirms an order (see
//! [`crate::events`]). Locally, under `celerity-dev run`, the bucket is a
//! folder in the session's data folder, so the receipt is a file to open;
//! on AWS it is S3.
//!
//! A handler takes them as a [`Receipts`] argument: the bucket
//! `receiptsBucket` of the application's resource links. [`Receipts`] is
//! declared with `celerity::resource!`, so an application whose links lack
//! the bucket refuses to start, naming it, rather than confirm orders
//! without their receipts.

use std::fmt::Write as _;

use celerity::resources::bucket::{Bucket, PutOptions};
use celerity::resources::{Named, ResourceError};

use crate::model::Order;

/// The blueprint's bucket of receipts, by resource name: the one
/// [`Receipts`] is declared for.
pub const BUCKET: &str = <Receipts as Named>::NAME;

celerity::resource! {
    /// Where receipts go: a handle on the bucket `receiptsBucket`. Cheap to
    /// clone.
    pub Receipts: Bucket = "receiptsBucket"
}

impl Receipts {
    /// Receipts written to `bucket`.
    pub fn to(bucket: Bucket) -> Self {
        Receipts(bucket)
    }

    /// The key of `order_id`'s receipt.
    pub fn key(order_id: &str) -> String {
        format!("receipts/{order_id}.txt")
    }

    /// Writes the receipt of `order`, replacing one written before: the
    /// receipt of an order is the same text every time, so a confirmation
    /// delivered again writes what is there already. The key written.
    pub async fn write(&self, order: &Order) -> Result<String, ResourceError> {
        let key = Self::key(&order.id);
        let options = PutOptions::new().content_type("text/plain; charset=utf-8").metadata("order", &order.id);
        self.0.put_with(&key, receipt(order), options).await?;
        Ok(key)
    }
}

/// The receipt's text: who, what, how much, and when it was placed and
/// confirmed (UTC). Nothing in it changes after the confirmation.
pub fn receipt(order: &Order) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "Receipt for order {}", order.id);
    let _ = writeln!(text, "Customer: {}", order.customer);
    let _ = writeln!(text, "Placed:    {}", utc(order.created_at_ms));
    if let Some(confirmed) = order.confirmed_at_ms {
        let _ = writeln!(text, "Confirmed: {}", utc(confirmed));
    }
    text.push('\n');
    for line in &order.items {
        let _ = writeln!(
            text,
            "  {:>3} x {:<12} @ {:>8} = {:>9}",
            line.quantity,
            line.sku,
            money(line.unit_price_cents),
            money(line.line_total_cents)
        );
    }
    let _ = writeln!(text, "\nTotal: {}", money(order.total_cents));
    text
}

/// Cents as `12.34`.
fn money(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// Unix milliseconds as `2026-12-06 03:04:05 UTC`.
fn utc(ms: u64) -> String {
    let seconds = ms / 1000;
    let (days, of_day) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil(days);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", of_day / 3600, of_day % 3600 / 60, of_day % 60)
}

/// The date `days` after 1970-01-01, in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`, for dates on or after the epoch).
fn civil(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_796_526_245_000), "2026-12-06 03:04:05 UTC");
    }

    #[test]
    fn money_has_two_decimals() {
        assert_eq!((money(700), money(5), money(2400)), ("7.00".into(), "0.05".into(), "24.00".into()));
    }
}
