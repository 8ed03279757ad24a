//! Numbers as DynamoDB reads them: decimal text of up to 38 significant
//! digits, compared and added exactly. A 64-bit float would call
//! `0.1 + 0.2` `0.30000000000000004`, and `1.00000000000000001` equal to
//! `1`, where DynamoDB does neither.

use std::cmp::Ordering;

/// The most significant digits DynamoDB keeps in a number.
const MAX_DIGITS: usize = 38;
/// How far from 1 DynamoDB's numbers reach (10^-130 to 10^125, with the
/// digits counted): an exponent past this is no DynamoDB number, and is
/// refused before it makes a long run of zeros.
const MAX_EXPONENT: i64 = 200;

/// A decimal: `digits` (most significant first, no leading or trailing
/// zeros; empty for zero) times ten to `exponent`, negative where
/// `negative`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

impl Decimal {
    /// `text` as a number (`-12.50`, `1e3`, `+.5`), or `None` where it is
    /// not one.
    fn parse(text: &str) -> Option<Decimal> {
        let text = text.trim();
        let (negative, text) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(at) => (&text[..at], text[at + 1..].parse::<i64>().ok()?),
            None => (text, 0),
        };
        if !(-MAX_EXPONENT..=MAX_EXPONENT).contains(&exponent) {
            return None;
        }
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        if !whole.bytes().chain(fraction.bytes()).all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        // Every digit of the fraction moves the point one place left.
        let fraction_places = i64::try_from(fraction.len()).ok()?;
        let mut digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).map(|byte| byte - b'0').collect();
        let mut exponent = exponent - fraction_places;
        let leading = digits.iter().take_while(|digit| **digit == 0).count();
        digits.drain(..leading);
        while digits.last() == Some(&0) {
            digits.pop();
            exponent += 1;
        }
        if digits.is_empty() {
            return Some(Decimal { negative: false, digits, exponent: 0 });
        }
        // Bounded, so that lining two numbers up for a sum makes no more
        // than a few hundred digits whatever the text.
        if digits.len() > MAX_DIGITS * 4 || !(-2 * MAX_EXPONENT..=2 * MAX_EXPONENT).contains(&exponent) {
            return None;
        }
        Some(Decimal { negative, digits, exponent })
    }

    /// The position of the most significant digit: 1 for 1 to 9.99.
    fn magnitude(&self) -> i64 {
        self.digits.len() as i64 + self.exponent
    }

    fn compare(&self, other: &Decimal) -> Ordering {
        let sign = |decimal: &Decimal| match (decimal.digits.is_empty(), decimal.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        };
        let (a, b) = (sign(self), sign(other));
        if a != b || a == 0 {
            return a.cmp(&b);
        }
        // Of two numbers of one sign, the one with more digits before the
        // point is further from zero; with as many, the digits decide.
        let by_size = self.magnitude().cmp(&other.magnitude()).then_with(|| self.digits.cmp(&other.digits));
        if a < 0 { by_size.reverse() } else { by_size }
    }

    /// The digits as a whole number scaled to ten to `exponent` (which is
    /// at most the number's own).
    fn scaled(&self, exponent: i64) -> Vec<u8> {
        let mut digits = self.digits.clone();
        digits.resize(digits.len() + (self.exponent - exponent) as usize, 0);
        digits
    }

    fn add(&self, other: &Decimal) -> Decimal {
        if self.digits.is_empty() {
            return other.clone();
        }
        if other.digits.is_empty() {
            return self.clone();
        }
        let exponent = self.exponent.min(other.exponent);
        let (a, b) = (self.scaled(exponent), other.scaled(exponent));
        let (digits, negative) = if self.negative == other.negative {
            (add_digits(&a, &b), self.negative)
        } else {
            match compare_digits(&a, &b) {
                Ordering::Equal => return Decimal { negative: false, digits: Vec::new(), exponent: 0 },
                Ordering::Greater => (subtract_digits(&a, &b), self.negative),
                Ordering::Less => (subtract_digits(&b, &a), other.negative),
            }
        };
        let mut sum = Decimal { negative, digits, exponent };
        sum.normalize();
        sum
    }

    fn normalize(&mut self) {
        let leading = self.digits.iter().take_while(|digit| **digit == 0).count();
        self.digits.drain(..leading);
        while self.digits.last() == Some(&0) {
            self.digits.pop();
            self.exponent += 1;
        }
        if self.digits.is_empty() {
            self.negative = false;
            self.exponent = 0;
        }
    }

    /// The number as plain decimal text, as DynamoDB answers it: no
    /// exponent, no leading or trailing zeros (`-0.05`, `1200`).
    fn text(&self) -> String {
        if self.digits.is_empty() {
            return "0".to_string();
        }
        let digits: String = self.digits.iter().map(|digit| char::from(b'0' + digit)).collect();
        let mut text = String::new();
        if self.negative {
            text.push('-');
        }
        let magnitude = self.magnitude();
        if self.exponent >= 0 {
            text.push_str(&digits);
            text.extend(std::iter::repeat_n('0', self.exponent as usize));
        } else if magnitude > 0 {
            let (whole, fraction) = digits.split_at(magnitude as usize);
            text.push_str(whole);
            text.push('.');
            text.push_str(fraction);
        } else {
            text.push_str("0.");
            text.extend(std::iter::repeat_n('0', (-magnitude) as usize));
            text.push_str(&digits);
        }
        text
    }
}

/// Two runs of digits of one length or not (no leading zeros), compared
/// as whole numbers.
fn compare_digits(a: &[u8], b: &[u8]) -> Ordering {
    let trim = |digits: &[u8]| digits.iter().position(|digit| *digit != 0).map_or(0, |at| digits.len() - at);
    trim(a).cmp(&trim(b)).then_with(|| a[a.len() - trim(a)..].cmp(&b[b.len() - trim(b)..]))
}

fn add_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut sum = Vec::with_capacity(a.len().max(b.len()) + 1);
    let mut carry = 0;
    let (mut a, mut b) = (a.iter().rev(), b.iter().rev());
    loop {
        let (x, y) = (a.next(), b.next());
        if x.is_none() && y.is_none() {
            break;
        }
        let total = x.copied().unwrap_or(0) + y.copied().unwrap_or(0) + carry;
        sum.push(total % 10);
        carry = total / 10;
    }
    if carry > 0 {
        sum.push(carry);
    }
    sum.reverse();
    sum
}

/// `a - b`, where `a` is the larger.
fn subtract_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut difference = Vec::with_capacity(a.len());
    let mut borrow = 0;
    let mut b = b.iter().rev();
    for x in a.iter().rev() {
        let y = b.next().copied().unwrap_or(0) + borrow;
        if *x >= y {
            difference.push(x - y);
            borrow = 0;
        } else {
            difference.push(x + 10 - y);
            borrow = 1;
        }
    }
    difference.reverse();
    difference
}

/// Two numbers' order by value, `None` where either is not a number.
pub(crate) fn compare(a: &str, b: &str) -> Option<Ordering> {
    Some(Decimal::parse(a)?.compare(&Decimal::parse(b)?))
}

/// The sum of two numbers, exact, as DynamoDB's `ADD` makes it; `None`
/// where either is not a number, or the sum has more significant digits
/// than DynamoDB keeps.
pub(crate) fn add(a: &str, b: &str) -> Option<String> {
    let sum = Decimal::parse(a)?.add(&Decimal::parse(b)?);
    (sum.digits.len() <= MAX_DIGITS).then(|| sum.text())
}

/// The bytes DynamoDB counts for a number: one for every two significant
/// digits, and one more; `None` where it is not a number.
pub(crate) fn size(text: &str) -> Option<usize> {
    Decimal::parse(text).map(|decimal| decimal.digits.len().div_ceil(2) + 1)
}

/// The one spelling of a number's value (`1`, `1.0` and `1e0` are one),
/// `None` where it is not a number.
pub(crate) fn canonical(text: &str) -> Option<String> {
    Decimal::parse(text).map(|decimal| decimal.text())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_by_exact_decimal_value() {
        assert_eq!(compare("9", "10"), Some(Ordering::Less));
        assert_eq!(compare("1.0", "1"), Some(Ordering::Equal));
        assert_eq!(compare("1e2", "100"), Some(Ordering::Equal));
        assert_eq!(compare("-0", "0"), Some(Ordering::Equal));
        assert_eq!(compare("-2", "-10"), Some(Ordering::Greater));
        assert_eq!(compare("-0.5", "0.25"), Some(Ordering::Less));
        // Past a 64-bit float's precision, still told apart.
        assert_eq!(compare("1.00000000000000001", "1"), Some(Ordering::Greater));
        assert_eq!(
            compare("12345678901234567890123456789012345678", "12345678901234567890123456789012345679"),
            Some(Ordering::Less)
        );
        assert_eq!(compare("0.001", "0.01"), Some(Ordering::Less));
        for not_a_number in ["", "-", "abc", "1.2.3", "1e", "1e999999", "NaN", "inf", "."] {
            assert_eq!(compare(not_a_number, "1"), None, "{not_a_number}");
        }
    }

    #[test]
    fn sums_are_exact() {
        assert_eq!(add("0.1", "0.2").as_deref(), Some("0.3"));
        assert_eq!(add("1", "-1").as_deref(), Some("0"));
        assert_eq!(add("-5", "3").as_deref(), Some("-2"));
        assert_eq!(add("3", "-5").as_deref(), Some("-2"));
        assert_eq!(add("999", "1").as_deref(), Some("1000"));
        assert_eq!(add("1.5", "-0.25").as_deref(), Some("1.25"));
        assert_eq!(add("-0.001", "0").as_deref(), Some("-0.001"));
        assert_eq!(add("1e3", "2").as_deref(), Some("1002"));
        assert_eq!(
            add("170141183460469231731687303715884105000", "1").as_deref(),
            None,
            "39 significant digits are more than DynamoDB keeps"
        );
        assert_eq!(
            add("17014118346046923173168730371588410500", "1").as_deref(),
            Some("17014118346046923173168730371588410501")
        );
        assert_eq!(add("x", "1"), None);
    }

    #[test]
    fn one_value_has_one_spelling() {
        for (text, spelled) in
            [("1.0", "1"), ("01", "1"), ("1e0", "1"), ("-0.0", "0"), ("1.2e1", "12"), ("5e-3", "0.005")]
        {
            assert_eq!(canonical(text).as_deref(), Some(spelled), "{text}");
        }
        assert_eq!(canonical("1e3").as_deref(), Some("1000"));
    }

    #[test]
    fn a_number_counts_its_significant_digits() {
        assert_eq!(size("0.000000000001"), Some(2), "one digit, however far from the point");
        assert_eq!(size("-1234.5"), Some(4));
        assert_eq!(size("1000000"), Some(2));
        assert_eq!(size("0"), Some(1));
        assert_eq!(size("x"), None);
    }
}
