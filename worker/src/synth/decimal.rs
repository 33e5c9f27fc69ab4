//! Decimal text for timestamps and ids, without floats.
//!
//! Trace timestamps are µs with up to nine decimals (Kineto writes three). They are read as
//! `(integer, number of decimals)` and written back from the same pair, so a value survives any
//! integer shift exactly; `f64` cannot hold `4.4e12` µs to the nanosecond through arithmetic.
//! `push_us` prints the engine's `i64` ns as µs with three decimals, Kineto's format.
//! Cost: a pass over the digits; no allocation beyond the output buffer.

/// Appends `ns` as microseconds with exactly three decimals (`4412345678901.234`).
pub(crate) fn push_us(out: &mut Vec<u8>, ns: i64) {
    push_decimal(out, ns, 3);
}

/// Digits of a non-negative integer (at most 19, so it fits); `None` for anything else.
pub(crate) fn parse_u64(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 19 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(text.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
}

/// `-?digits(.digits)?` as (integer value, number of decimals); `None` for anything else.
pub(crate) fn parse_decimal(text: &[u8]) -> Option<(i64, u32)> {
    let (negative, body) = match text.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int, frac) = match body.iter().position(|&c| c == b'.') {
        Some(dot) => (&body[..dot], &body[dot + 1..]),
        None => (body, &body[..0]),
    };
    if int.is_empty() || frac.len() > 9 || (body.len() > int.len() && frac.is_empty()) {
        return None;
    }
    let mut value: i64 = 0;
    for &d in int.iter().chain(frac) {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
    }
    Some((if negative { -value } else { value }, frac.len() as u32))
}

/// A decimal `(value, digits)` in µs as ns, rounded toward zero past the third decimal.
pub(crate) fn to_ns(value: i64, digits: u32) -> i64 {
    if digits <= 3 {
        value.saturating_mul(10i64.pow(3 - digits))
    } else {
        value / 10i64.pow(digits - 3)
    }
}

pub(crate) fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Appends `value` × 10^-`digits` with exactly `digits` decimals.
pub(crate) fn push_decimal(out: &mut Vec<u8>, value: i64, digits: u32) {
    if value < 0 {
        out.push(b'-');
    }
    let abs = value.unsigned_abs();
    let unit = 10u64.pow(digits);
    push_u64(out, abs / unit);
    if digits > 0 {
        out.push(b'.');
        let frac = abs % unit;
        let mut tmp = [b'0'; 9];
        let mut f = frac;
        for slot in tmp[..digits as usize].iter_mut().rev() {
            *slot = b'0' + (f % 10) as u8;
            f /= 10;
        }
        out.extend_from_slice(&tmp[..digits as usize]);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn decimals_round_trip_exactly() {
        for text in [
            "4808593490886.558",
            "1694128201436952",
            "-1.500",
            "0.000000001",
            "12.30",
        ] {
            let (v, d) = parse_decimal(text.as_bytes()).unwrap();
            let mut out = Vec::new();
            push_decimal(&mut out, v, d);
            assert_eq!(String::from_utf8(out).unwrap(), text);
        }
        for bad in ["1e3", "1.", ".5", "", "-", "0x10", "1.2.3"] {
            assert_eq!(parse_decimal(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(to_ns(4_808_593_490_886_558, 3), 4_808_593_490_886_558);
        assert_eq!(to_ns(15, 1), 1_500);
    }

    #[test]
    fn push_us_prints_three_decimals() {
        let mut out = Vec::new();
        for ns in [4_412_345_678_901_234, 5, -1_500, 0] {
            push_us(&mut out, ns);
            out.push(b' ');
        }
        assert_eq!(out, b"4412345678901.234 0.005 -1.500 0.000 ");
    }
}
