//! Numbers as Redis reads and writes them.

/// An integer as Redis reads one (`string2ll`): an optional `-`, then digits
/// with no leading zero; no `+`, no spaces, and within 64 bits.
pub(super) fn parse_int(bytes: &[u8]) -> Option<i64> {
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    let well_formed = match digits {
        [b'0'] => bytes.len() == 1,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !well_formed {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

/// A double as Redis reads a score or an increment (`strtod`, checked):
/// no spaces, `inf` allowed, NaN refused, and so is a number too large or
/// too small for a double, which Rust's parser would round to infinity or 0.
pub(super) fn parse_float(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let value: f64 = text.parse().ok()?;
    let spelled_infinite = text.trim_start_matches(['+', '-']).get(..3).is_some_and(|s| s.eq_ignore_ascii_case("inf"));
    let overflowed = value.is_infinite() && !spelled_infinite;
    let mantissa = text.split(['e', 'E']).next().unwrap_or(text);
    let underflowed = value == 0.0 && mantissa.bytes().any(|b| matches!(b, b'1'..=b'9'));
    (!value.is_nan() && !overflowed && !underflowed).then_some(value)
}

/// A score bound's number, read as Redis reads it there (plain `strtod`):
/// an empty one is 0, leading spaces pass, and overflow is infinity.
pub(super) fn parse_bound(bytes: &[u8]) -> Option<f64> {
    if bytes.is_empty() {
        return Some(0.0);
    }
    let text = std::str::from_utf8(bytes).ok()?.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let value: f64 = text.parse().ok()?;
    (!value.is_nan()).then_some(value)
}

/// A double as Redis 7 answers a score (`fpconv_dtoa`): the shortest digits
/// that read back as the same double, written out plainly unless the
/// exponent is far from them, then as `1.5e+20` or `2.5e-7`.
pub(super) fn format_score(value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.into();
    }
    if value == 0.0 {
        return "0".into();
    }
    let sign = if value < 0.0 { "-" } else { "" };
    // `{:e}` writes the shortest round-tripping digits, as `d.ddde-7`.
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let n = digits.len() as i32;
    // The power of ten of the last digit.
    let last = exponent - (n - 1);
    let body = if last >= 0 && exponent < n + 7 {
        format!("{digits}{}", "0".repeat(last as usize))
    } else if last < 0 && (last > -7 || exponent.abs() < 4) {
        let point = n + last;
        if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else {
            let (whole, fraction) = digits.split_at(point as usize);
            format!("{whole}.{fraction}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        format!("{first}{fraction}e{}{}", if exponent < 0 { '-' } else { '+' }, exponent.abs())
    };
    format!("{sign}{body}")
}
