//! C `printf` number formatting: `%g` with a precision and a width, as glibc prints it.
//!
//! ministat prints every number with `%g`, `%.8g` or `%13.8g`; users compare such tables
//! digit by digit, so the rounding (exact, ties to even), the choice between fixed and
//! exponent notation, the stripped trailing zeros, `-0`, `inf` and `-nan` must all be glibc's.
//! The one implementation of the crate: every report formats through it.

/// `printf("%.{precision}g", value)`: `precision` significant digits (0 counts as 1), fixed
/// notation when the decimal exponent X satisfies -4 <= X < precision, else `d.ddde±XX`;
/// trailing zeros and a trailing point removed. NaN prints as `nan` or `-nan` by its sign bit.
pub(crate) fn fmt_g(value: f64, precision: usize) -> String {
    let mut out = String::new();
    push_g(&mut out, value, precision);
    out
}

/// Appends `printf("%.{precision}g", value)` to `out`.
pub(crate) fn push_g(out: &mut String, value: f64, precision: usize) {
    if value.is_sign_negative() {
        out.push('-');
    }
    if value.is_nan() {
        out.push_str("nan");
        return;
    }
    if value.is_infinite() {
        out.push_str("inf");
        return;
    }
    let precision = precision.max(1);
    // Rust's `{:.N e}` is exact and rounds ties to even, like glibc: its digits are those of
    // `%.{P-1}e`, and `%g` takes the same digits whichever notation it then chooses.
    let sci = format!("{:.*e}", precision - 1, value.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.as_bytes();
    if exponent < -4 || exponent >= precision as i64 {
        out.push(char::from(digits[0]));
        push_fraction(out, &digits[1..]);
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let magnitude = exponent.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        out.push_str(&magnitude.to_string());
    } else if exponent >= 0 {
        let point = exponent as usize + 1;
        out.extend(digits[..point].iter().map(|&d| char::from(d)));
        push_fraction(out, &digits[point..]);
    } else {
        out.push('0');
        let zeros = "0".repeat((-exponent - 1) as usize);
        let fraction: Vec<u8> = zeros.bytes().chain(digits.iter().copied()).collect();
        push_fraction(out, &fraction);
    }
}

/// Appends `.` and `fraction` without its trailing zeros, or nothing when they are all zeros.
fn push_fraction(out: &mut String, fraction: &[u8]) {
    let len = fraction
        .iter()
        .rposition(|&d| d != b'0')
        .map_or(0, |p| p + 1);
    if len > 0 {
        out.push('.');
        out.extend(fraction[..len].iter().map(|&d| char::from(d)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn known_values() {
        let cases: &[(f64, usize, &str)] = &[
            (0.0, 6, "0"),
            (-0.0, 6, "-0"),
            (1.0, 6, "1"),
            (100000.0, 6, "100000"),
            (1_000_000.0, 6, "1e+06"),
            (0.0001, 6, "0.0001"),
            (0.00001, 6, "1e-05"),
            (123456789.0, 8, "1.2345679e+08"),
            (12345678.0, 8, "12345678"),
            (99999999.5, 8, "1e+08"),
            (0.1, 8, "0.1"),
            (1.5, 0, "2"),
            (2.5, 1, "2"),
            (0.125, 2, "0.12"),
            (0.375, 2, "0.38"),
            (1e300, 8, "1e+300"),
            (-1.5e-300, 8, "-1.5e-300"),
            (5e-324, 8, "4.9406565e-324"),
            (f64::MAX, 17, "1.7976931348623157e+308"),
            (f64::INFINITY, 8, "inf"),
            (f64::NEG_INFINITY, 6, "-inf"),
            (f64::NAN, 8, "nan"),
            (-f64::NAN, 8, "-nan"),
            (1963.63, 6, "1963.63"),
        ];
        for &(v, p, want) in cases {
            assert_eq!(fmt_g(v, p), want, "%.{p}g of {v:e}");
        }
    }

    /// Deterministic values of every magnitude, with ties and round numbers mixed in.
    fn sample_values() -> Vec<f64> {
        let mut values = vec![0.5, 1.5, 2.5, 0.05, 0.15, 0.25, 9.5, 99.5, 999_999.5];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..3000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = match i % 4 {
                // Any bit pattern that is a finite double.
                0 => f64::from_bits(state),
                // Decimal-looking values: short mantissas at every exponent.
                1 => (state % 100_000) as f64 * 10f64.powi((state >> 40) as i32 % 40 - 20),
                // Exact binary fractions, often ties at the printed precision.
                2 => (state % 4096) as f64 / 64.0,
                _ => (state % 1_000_000_007) as f64 / 1000.0,
            };
            if v.is_finite() {
                values.push(if state & 1 == 1 { -v } else { v });
            }
        }
        values
    }

    /// The exact value of `v` as a C hexadecimal literal (`-0x1fp-3`).
    fn hex_literal(v: f64) -> String {
        let bits = v.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let fraction = bits & ((1 << 52) - 1);
        let (mantissa, exponent) = if biased == 0 {
            (fraction, -1074)
        } else {
            (fraction | 1 << 52, biased - 1075)
        };
        let sign = if v.is_sign_negative() { "-" } else { "" };
        format!("{sign}0x{mantissa:x}p{exponent}")
    }

    #[test]
    fn matches_c_printf() {
        // printf(1) formats with glibc (as a long double, which holds every double exactly);
        // hexadecimal arguments reach it without a decimal rounding on the way.
        let values = sample_values();
        for precision in [1, 6, 8, 17] {
            let format = format!("%.{precision}g\\n");
            let args: Vec<String> = values.iter().map(|&v| hex_literal(v)).collect();
            let out = Command::new("printf")
                .arg(&format)
                .args(&args)
                .env("LC_ALL", "C")
                .output()
                .expect("printf(1) runs");
            let expected = String::from_utf8(out.stdout).expect("printf prints ASCII");
            for (v, want) in values.iter().zip(expected.lines()) {
                assert_eq!(fmt_g(*v, precision), want, "%.{precision}g of {v:e}");
            }
        }
    }
}
