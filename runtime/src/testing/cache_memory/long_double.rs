//! INCRBYFLOAT's arithmetic. Redis adds in C's `long double` (x87 extended
//! precision on x86-64: a 64-bit mantissa) and writes the sum with `%.17Lf`,
//! trailing zeros trimmed. So 1.1 + 2.2 gives `3.3` (a double sum would
//! write 3.3000000000000003), while 100000 + 1.1 gives
//! `100001.10000000000000142`: the extended value's own digits. This module
//! does the same arithmetic in software, exactly.

use super::Refusal;
use super::numbers::parse_float;

/// The decimals Redis writes of an INCRBYFLOAT sum.
const DECIMALS: usize = 17;

/// INCRBYFLOAT's new value: `current + increment`, written as Redis writes it.
pub(super) fn add_floats(current: &[u8], increment: &[u8]) -> Result<String, Refusal> {
    let (Some(a), Some(b)) = (parse_float(current), parse_float(increment)) else {
        return Err(Refusal::not_float());
    };
    if !(a + b).is_finite() {
        return Err(Refusal::err("increment would produce NaN or Infinity"));
    }
    let extended = LongDouble::parse(current).zip(LongDouble::parse(increment)).and_then(|(x, y)| x.add(y).to_fixed());
    // Beyond what the software extended type covers (over 38 digits, or
    // past 2^127), the sum of the doubles, written the same way.
    Ok(extended.unwrap_or_else(|| trim(format!("{:.17}", a + b))))
}

/// Drops trailing zeros after the point, and the point if nothing is left
/// after it; `-0` becomes `0`, as Redis writes it.
fn trim(text: String) -> String {
    let trimmed = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    if trimmed == "-0" { "0".into() } else { trimmed.into() }
}

/// An extended-precision number: `±mantissa × 2^exponent`, the mantissa's
/// top bit set unless it is zero.
#[derive(Debug, Clone, Copy)]
struct LongDouble {
    negative: bool,
    mantissa: u64,
    exponent: i64,
}

impl LongDouble {
    const ZERO: Self = Self { negative: false, mantissa: 0, exponent: 0 };

    /// The nearest value to a decimal in plain or exponent notation, as
    /// `strtold` reads it; `None` for `inf`, or past 38 digits.
    fn parse(bytes: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(bytes).ok()?;
        let (mantissa, exponent) = match text.split_once(['e', 'E']) {
            Some((mantissa, exponent)) => (mantissa, exponent.parse::<i64>().ok()?),
            None => (text, 0),
        };
        let (negative, mantissa) = match mantissa.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mut digits: u128 = 0;
        for byte in whole.bytes().chain(fraction.bytes()) {
            if !byte.is_ascii_digit() {
                return None;
            }
            digits = digits.checked_mul(10)?.checked_add(u128::from(byte - b'0'))?;
        }
        // The value is digits / 10^scale.
        let mut scale = i64::try_from(fraction.len()).ok()?.checked_sub(exponent)?;
        if scale < 0 {
            digits = digits.checked_mul(10u128.checked_pow(u32::try_from(-scale).ok()?)?)?;
            scale = 0;
        }
        let denominator = 10u128.checked_pow(u32::try_from(scale).ok()?)?;
        Some(Self { negative, ..Self::from_ratio(digits, denominator) })
    }

    /// The nearest value to `numerator / denominator` (denominator at most
    /// 10^38), by binary long division to two bits past the mantissa.
    fn from_ratio(numerator: u128, denominator: u128) -> Self {
        let (mut bits, mut remainder) = (numerator / denominator, numerator % denominator);
        let mut exponent = 0;
        while bits.leading_zeros() > 128 - 66 {
            if bits == 0 && remainder == 0 {
                return Self::ZERO;
            }
            // remainder < denominator ≤ 10^38, so twice it fits.
            remainder *= 2;
            bits = bits * 2 + u128::from(remainder >= denominator);
            if remainder >= denominator {
                remainder -= denominator;
            }
            exponent -= 1;
        }
        Self::round(false, bits, exponent, remainder != 0)
    }

    /// `±bits × 2^exponent` rounded to a 64-bit mantissa, to nearest, ties to
    /// even; `sticky` says something nonzero lies below `bits`.
    fn round(negative: bool, bits: u128, exponent: i64, sticky: bool) -> Self {
        if bits == 0 {
            return Self::ZERO;
        }
        let width = u128::BITS - bits.leading_zeros();
        if width <= 64 {
            let shift = 64 - width;
            return Self { negative, mantissa: (bits << shift) as u64, exponent: exponent - i64::from(shift) };
        }
        let shift = width - 64;
        let (mut mantissa, rest, half) = (bits >> shift, bits & ((1 << shift) - 1), 1u128 << (shift - 1));
        if rest > half || (rest == half && (sticky || mantissa & 1 == 1)) {
            mantissa += 1;
        }
        let mut exponent = exponent + i64::from(shift);
        if mantissa >> 64 != 0 {
            mantissa >>= 1;
            exponent += 1;
        }
        Self { negative, mantissa: mantissa as u64, exponent }
    }

    /// The sum, rounded once, as the FPU rounds it.
    fn add(self, other: Self) -> Self {
        if other.mantissa == 0 {
            return self;
        }
        if self.mantissa == 0 {
            return other;
        }
        let (high, low) = if self.exponent >= other.exponent { (self, other) } else { (other, self) };
        let gap = high.exponent - low.exponent;
        // The smaller is then below a quarter of the larger's last unit.
        if gap >= 66 {
            return high;
        }
        // 62 bits of headroom below the larger; what the smaller loses past
        // them only matters as "something below", kept in its lowest bit.
        const GUARD: i64 = 62;
        let big = u128::from(high.mantissa) << GUARD;
        let small = if gap <= GUARD {
            u128::from(low.mantissa) << (GUARD - gap)
        } else {
            let shift = gap - GUARD;
            (u128::from(low.mantissa) >> shift) | u128::from(low.mantissa & ((1 << shift) - 1) != 0)
        };
        let signed = |negative: bool, value: u128| if negative { -(value as i128) } else { value as i128 };
        let sum = signed(high.negative, big) + signed(low.negative, small);
        Self::round(sum < 0, sum.unsigned_abs(), high.exponent - GUARD, false)
    }

    /// The value with 17 decimals (rounded to nearest, ties to even, as glibc
    /// prints), trimmed; `None` past 2^127.
    fn to_fixed(self) -> Option<String> {
        let mantissa = u128::from(self.mantissa);
        let (whole, decimals) = if self.exponent >= 0 {
            (
                mantissa.checked_shl(u32::try_from(self.exponent).ok()?).filter(|_| self.exponent < 64)?,
                vec![0u8; DECIMALS],
            )
        } else if self.exponent < -124 {
            // Below 2^-60: nothing shows in 17 decimals.
            (0, vec![0u8; DECIMALS])
        } else {
            let shift = self.exponent.unsigned_abs() as u32;
            let mask = (1u128 << shift) - 1;
            let mut fraction = mantissa & mask;
            let mut decimals = Vec::with_capacity(DECIMALS);
            for _ in 0..DECIMALS {
                // fraction < 2^124, so ten times it fits.
                fraction *= 10;
                decimals.push((fraction >> shift) as u8);
                fraction &= mask;
            }
            let half = 1u128 << (shift - 1);
            let odd = decimals.last().is_some_and(|digit| digit % 2 == 1);
            let mut whole = mantissa >> shift;
            if fraction > half || (fraction == half && odd) {
                // Carry up through the decimals, and into the whole part.
                let carried_out = decimals.iter_mut().rev().all(|digit| {
                    *digit = (*digit + 1) % 10;
                    *digit == 0
                });
                whole += u128::from(carried_out);
            }
            (whole, decimals)
        };
        let decimals: String = decimals.iter().map(|digit| char::from(b'0' + digit)).collect();
        let sign = if self.negative { "-" } else { "" };
        Some(trim(format!("{sign}{whole}.{decimals}")))
    }
}
