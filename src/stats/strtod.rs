//! C's `strtod` and `strtol` (glibc, "C" locale) over bytes, without allocation.
//!
//! ministat accepts a token when `strtod` consumes all of it, so what it accepts is exactly
//! strtod's grammar: leading white space, a sign, then a decimal number (`1e3`, `.5`, `5.`),
//! a hexadecimal one (`0x10`, `0x1.8p1`), `inf`/`infinity` or `nan`/`nan(chars)`, any case.
//! Decimal conversion is Rust's `f64::from_str`, correctly rounded like glibc's; hexadecimal
//! conversion rounds to nearest even here, as glibc does.

/// C's `isspace` in the "C" locale.
pub(crate) fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// Skips an optional `+` or `-` at `s[*i]`; true when it was `-`.
fn take_sign(s: &[u8], i: &mut usize) -> bool {
    match s.get(*i) {
        Some(&sign @ (b'-' | b'+')) => {
            *i += 1;
            sign == b'-'
        }
        _ => false,
    }
}

/// Parses the longest prefix of `s` that `strtod` converts. Returns the value and the number
/// of bytes consumed; 0 bytes (and value 0) when there is no number, as `strtod` sets its end
/// pointer to the start then.
pub(crate) fn strtod(s: &[u8]) -> (f64, usize) {
    let start = s.iter().position(|&b| !is_c_space(b)).unwrap_or(s.len());
    let mut i = start;
    let negative = take_sign(s, &mut i);
    let signed = |v: f64| if negative { -v } else { v };
    let rest = &s[i..];
    if starts_with_ignore_case(rest, b"inf") {
        let len = if starts_with_ignore_case(rest, b"infinity") {
            8
        } else {
            3
        };
        return (signed(f64::INFINITY), i + len);
    }
    if starts_with_ignore_case(rest, b"nan") {
        let mut end = i + 3;
        if s.get(end) == Some(&b'(') {
            let inner = s[end + 1..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
            if s.get(end + 1 + inner) == Some(&b')') {
                end += inner + 2;
            }
        }
        return (signed(f64::NAN), end);
    }
    if rest.len() >= 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
        if let Some((value, len)) = hex(&rest[2..]) {
            return (signed(value), i + 2 + len);
        }
    }
    match decimal_len(rest) {
        0 => (0.0, 0),
        len => {
            // The slice is ASCII digits, '.', 'e', signs: valid UTF-8 and valid for from_str.
            let text = std::str::from_utf8(&rest[..len]).unwrap_or("0");
            let value: f64 = text.parse().unwrap_or(0.0);
            (signed(value), i + len)
        }
    }
}

/// The value of `token` when `strtod` converts all of it (ministat's test of a valid number).
pub(crate) fn strtod_full(token: &[u8]) -> Option<f64> {
    // Fast path: Rust's grammar is strtod's without leading space, hexadecimal and `nan(...)`,
    // and where both accept a text they give the same value (correctly rounded, same signs).
    if let Some(value) = std::str::from_utf8(token).ok().and_then(|s| s.parse().ok()) {
        return Some(value);
    }
    let (value, used) = strtod(token);
    (used == token.len()).then_some(value)
}

/// Parses the longest prefix of `s` that `strtol(s, &end, 10)` converts, saturating at the
/// bounds of a 64-bit `long` as glibc does. Returns the value and the bytes consumed (0 when
/// there are no digits).
pub(crate) fn strtol(s: &[u8]) -> (i64, usize) {
    let mut i = s.iter().position(|&b| !is_c_space(b)).unwrap_or(s.len());
    let negative = take_sign(s, &mut i);
    let digits = s[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return (0, 0);
    }
    let mut value: i64 = 0;
    for &d in &s[i..i + digits] {
        let d = i64::from(d - b'0');
        value = if negative {
            value.saturating_mul(10).saturating_sub(d)
        } else {
            value.saturating_mul(10).saturating_add(d)
        };
    }
    (value, i + digits)
}

fn starts_with_ignore_case(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Length of the decimal number (digits, optional point, optional exponent) at the start of
/// `s`, 0 when there is none. An exponent without digits is not part of the number.
fn decimal_len(s: &[u8]) -> usize {
    let int = s.iter().take_while(|b| b.is_ascii_digit()).count();
    let mut i = int;
    let mut frac = 0;
    if s.get(i) == Some(&b'.') {
        frac = s[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        i += 1 + frac;
    }
    if int + frac == 0 {
        return 0;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(s.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp = s[j..].iter().take_while(|b| b.is_ascii_digit()).count();
        if exp > 0 {
            i = j + exp;
        }
    }
    i
}

/// Converts the hexadecimal number after `0x`: hex digits with an optional point, then an
/// optional binary exponent `p[+-]digits`. Returns the value and its length, or `None` when no
/// hex digit follows (then strtod converts just the `0`).
fn hex(s: &[u8]) -> Option<(f64, usize)> {
    // Up to 60 significant bits are kept exactly; the rest only matters as a sticky bit.
    const KEEP: u64 = 1 << 60;
    let mut mantissa: u64 = 0;
    let mut sticky = false;
    let mut exp2: i64 = 0;
    let mut digits = 0;
    let mut i = 0;
    let mut seen_point = false;
    while let Some(&b) = s.get(i) {
        if b == b'.' && !seen_point {
            seen_point = true;
            i += 1;
            continue;
        }
        let Some(d) = (b as char).to_digit(16) else {
            break;
        };
        digits += 1;
        if mantissa < KEEP {
            mantissa = mantissa << 4 | u64::from(d);
            if seen_point {
                exp2 -= 4;
            }
        } else {
            sticky |= d != 0;
            if !seen_point {
                exp2 += 4;
            }
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if matches!(s.get(i), Some(b'p' | b'P')) {
        let mut j = i + 1;
        let negative = take_sign(s, &mut j);
        let len = s[j..].iter().take_while(|b| b.is_ascii_digit()).count();
        if len > 0 {
            let mut e: i64 = 0;
            for &d in &s[j..j + len] {
                // Saturate far beyond any double's range; the result is then 0 or infinity.
                e = (e * 10 + i64::from(d - b'0')).min(1 << 40);
            }
            exp2 += if negative { -e } else { e };
            i = j + len;
        }
    }
    Some((scale_rounded(mantissa, sticky, exp2), i))
}

/// `mantissa * 2^exp2` rounded to nearest even, where `sticky` says that nonzero bits below
/// the mantissa were dropped.
fn scale_rounded(mantissa: u64, sticky: bool, exp2: i64) -> f64 {
    if mantissa == 0 {
        return 0.0;
    }
    let bits = i64::from(64 - mantissa.leading_zeros());
    let top = exp2 + bits - 1;
    if top > 1023 {
        return f64::INFINITY;
    }
    // Exponent of the result's least significant bit: 53 bits for normal numbers, fewer for
    // subnormals, whose last bit is 2^-1074.
    let lsb = (top - 52).max(-1074);
    let drop = lsb - exp2;
    let kept = if drop <= 0 {
        mantissa << -drop
    } else if drop > 64 {
        // Below half of the smallest subnormal.
        return 0.0;
    } else {
        let wide = u128::from(mantissa);
        let kept = (wide >> drop) as u64;
        let half = 1u128 << (drop - 1);
        let rest = wide & ((1u128 << drop) - 1);
        let round_up = rest > half || (rest == half && (sticky || kept & 1 == 1));
        kept + u64::from(round_up)
    };
    // kept <= 2^53 and lsb is in range, so the product is exact (or overflows to infinity).
    kept as f64 * pow2(lsb)
}

/// 2^e for e in -1074..=1023, exactly.
fn pow2(e: i64) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(s: &str) -> Option<f64> {
        let (v, n) = strtod(s.as_bytes());
        let slow = (n == s.len()).then_some(v);
        let fast = strtod_full(s.as_bytes());
        assert_eq!(
            slow.map(f64::to_bits),
            fast.map(f64::to_bits),
            "fast and slow paths disagree on {s:?}"
        );
        fast
    }

    #[test]
    fn accepts_what_ministat_accepts() {
        // Observed with Debian's ministat 20150715: these tokens are data.
        assert_eq!(full("0x10"), Some(16.0));
        assert_eq!(full(" +5"), Some(5.0));
        assert_eq!(full("\x0b5"), Some(5.0));
        assert_eq!(full("1e3"), Some(1000.0));
        assert_eq!(full(".5"), Some(0.5));
        assert_eq!(full("5."), Some(5.0));
        assert_eq!(full("0x1p3"), Some(8.0));
        assert_eq!(full("0X1.8P1"), Some(3.0));
        assert_eq!(full("0x.8"), Some(0.5));
        assert_eq!(full("0x1p-1074"), Some(f64::from_bits(1)));
        assert_eq!(full("INF"), Some(f64::INFINITY));
        assert_eq!(full("Infinity"), Some(f64::INFINITY));
        assert_eq!(full("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(full("1e400"), Some(f64::INFINITY));
        assert_eq!(full("1e-400"), Some(0.0));
        assert!(full("nan(123)").unwrap().is_nan());
        assert!(full("nan()").unwrap().is_nan());
        assert!(full("-nan").unwrap().is_sign_negative());
        assert!(full("-0").unwrap().is_sign_negative());
    }

    #[test]
    fn rejects_what_ministat_rejects() {
        for bad in [
            "nan(", "0x", "1e", "1e+", ".", "+-5", "5#", "infin", "nanx", " ", "-", "x",
        ] {
            assert_eq!(full(bad), None, "{bad:?}");
        }
        assert_eq!(strtod(b"0x"), (0.0, 1));
        assert_eq!(strtod(b"1e+"), (1.0, 1));
        assert_eq!(strtod(b" x"), (0.0, 0));
    }

    #[test]
    fn decimal_is_correctly_rounded() {
        assert_eq!(full("0.1"), Some(0.1));
        assert_eq!(
            full("2.2250738585072011e-308"),
            Some(2.225_073_858_507_201e-308)
        );
        assert_eq!(
            full("179769313486231580793728971405301e276"),
            Some(f64::MAX)
        );
        assert_eq!(full("1.7976931348623159e308"), Some(f64::INFINITY));
    }

    #[test]
    fn hex_rounds_to_nearest_even() {
        // 2^53 + 1 is a tie between 2^53 and 2^53 + 2: even wins; any lower bit breaks the tie.
        assert_eq!(full("0x20000000000001"), Some(9_007_199_254_740_992.0));
        assert_eq!(full("0x20000000000003"), Some(9_007_199_254_740_996.0));
        assert_eq!(
            full("0x20000000000001000000001"),
            Some(9_007_199_254_740_994.0 * 2f64.powi(36))
        );
        assert_eq!(full("0x1.fffffffffffff8p1023"), Some(f64::INFINITY));
        assert_eq!(full("0x1.fffffffffffff7p1023"), Some(f64::MAX));
        assert_eq!(full("0x1p-1075"), Some(0.0));
        assert_eq!(full("0x1.8p-1074"), Some(f64::from_bits(2)));
        assert_eq!(full("0x1p-2000"), Some(0.0));
        assert_eq!(full("0x1p99999999999999999999"), Some(f64::INFINITY));
    }

    #[test]
    fn strtol_like_glibc() {
        assert_eq!(strtol(b"42"), (42, 2));
        assert_eq!(strtol(b" -7x"), (-7, 3));
        assert_eq!(strtol(b"+3"), (3, 2));
        assert_eq!(strtol(b""), (0, 0));
        assert_eq!(strtol(b"-"), (0, 0));
        assert_eq!(strtol(b"0x10"), (0, 1));
        assert_eq!(strtol(b"99999999999999999999"), (i64::MAX, 20));
        assert_eq!(strtol(b"-99999999999999999999"), (i64::MIN, 21));
    }
}
