//! Rates and latencies as people read and write them: the one formatter of packets per second
//! that reports, charts and live progress lines share, and the one of nanoseconds that the
//! latency tables and charts share, so a figure reads the same everywhere it appears; and the
//! one reader of counts with an SI suffix (`500k`), which command lines and campaign files
//! share.

/// Parses a count with an optional SI suffix (`k`, `M`, `G`): `500000`, `500k`, `1.5M`.
pub fn parse_count(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        'G' => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(mult as u64);
    }
    let x = num.parse::<f64>().ok()? * mult;
    (x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 1.8e19).then_some(x as u64)
}

/// What a count in a campaign file may be written as, for serde's messages.
const COUNT_FORMS: &str = "a number, or a string with a k, M or G suffix (\"10k\", \"1.5M\")";

/// Reads a count written as a number or as the command line writes one (`"10k"`), so that a
/// figure copied from `benchlab gen -r` or `probe -r` reads the same in a campaign file.
struct CountVisitor;

impl serde::de::Visitor<'_> for CountVisitor {
    type Value = f64;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(COUNT_FORMS)
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<f64, E> {
        parse_count(v)
            .map(|n| n as f64)
            .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Str(v), &self))
    }
}

/// A whole count from a campaign file (`rate = 10000` or `"10k"`); a negative or fractional
/// one is refused here, the range by the key's own check.
pub(crate) fn de_whole<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = d.deserialize_any(CountVisitor)?;
    match v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 {
        true => Ok(v as u64),
        false => Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Float(v),
            &"a whole number ≥ 0",
        )),
    }
}

/// An optional rate from a campaign file (`min_load = 9001` or `"9k"`), packets/s.
pub(crate) fn de_rate<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    d.deserialize_any(CountVisitor).map(Some)
}

/// Rate units, largest first.
const PPS_UNITS: [(f64, &str); 3] = [(1e6, "Mpps"), (1e3, "Kpps"), (1.0, "pps")];
/// Time units of a value in nanoseconds, largest first.
const NS_UNITS: [(f64, &str); 4] = [(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")];

/// A rate scaled for display with three significant digits: `1488125` → `1.49 Mpps`.
pub(crate) fn format_pps(pps: f64) -> String {
    scaled(pps, &PPS_UNITS)
}

/// A latency in nanoseconds scaled for display with three significant digits: `2184` →
/// `2.18 µs`, `850` → `850 ns`, `1500000` → `1.5 ms`.
pub(crate) fn format_ns(ns: f64) -> String {
    scaled(ns, &NS_UNITS)
}

/// An axis tick of a rate axis labelled in the unit of [`pps_unit`]: `0` stays bare.
pub(crate) fn format_tick(value: f64, (scale, unit): (f64, &str)) -> String {
    if value == 0.0 {
        "0".to_string()
    } else {
        format!("{} {unit}", trim_decimals(value / scale, 3))
    }
}

/// The scale and unit a rate (or a rate axis up to `max`) is written in.
pub(crate) fn pps_unit(max: f64) -> (f64, &'static str) {
    unit_of(max, &PPS_UNITS)
}

/// The first of `units` (largest first) that `value` reaches in size; the last below them all.
fn unit_of(value: f64, units: &[(f64, &'static str)]) -> (f64, &'static str) {
    let last = units[units.len() - 1];
    (units.iter().copied())
        .find(|(scale, _)| value.abs() >= *scale)
        .unwrap_or(last)
}

/// `value` in the unit of `units` its size reaches, three significant digits.
fn scaled(value: f64, units: &[(f64, &'static str)]) -> String {
    let (scale, unit) = unit_of(value, units);
    format!("{} {unit}", trim_decimals(value / scale, 3))
}

/// `value` with at most `significant` significant digits before trailing zeros are cut, but
/// never fewer digits than its integer part.
fn trim_decimals(value: f64, significant: usize) -> String {
    let integer_digits = if value.abs() >= 1.0 {
        value.abs().log10().floor() as usize + 1
    } else {
        1
    };
    let decimals = significant.saturating_sub(integer_digits);
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_scale_to_kpps_and_mpps() {
        assert_eq!(format_pps(1_488_125.0), "1.49 Mpps");
        assert_eq!(format_pps(474_873.0), "475 Kpps");
        assert_eq!(format_pps(42_490_000.0), "42.5 Mpps");
        assert_eq!(format_pps(2_000_000.0), "2 Mpps");
        assert_eq!(format_pps(950.0), "950 pps");
        assert_eq!(format_pps(0.0), "0 pps");
    }

    #[test]
    fn latencies_scale_to_microseconds_and_milliseconds() {
        assert_eq!(format_ns(2_184.0), "2.18 µs");
        assert_eq!(format_ns(850.0), "850 ns");
        assert_eq!(format_ns(12_100.0), "12.1 µs");
        assert_eq!(format_ns(1_500_000.0), "1.5 ms");
        assert_eq!(format_ns(2e9), "2 s");
        assert_eq!(format_ns(-3_500.0), "-3.5 µs");
    }

    #[test]
    fn counts_take_an_si_suffix_on_the_command_line_and_in_files() {
        assert_eq!(parse_count("500000"), Some(500_000));
        assert_eq!(parse_count("500k"), Some(500_000));
        assert_eq!(parse_count("1.5M"), Some(1_500_000));
        assert_eq!(parse_count("1.5"), None);
        assert_eq!(parse_count("fast"), None);
        #[derive(Debug, serde::Deserialize)]
        struct File {
            #[serde(deserialize_with = "de_whole")]
            rate: u64,
            #[serde(default, deserialize_with = "de_rate")]
            load: Option<f64>,
        }
        let file = |text: &str| toml::from_str::<File>(text).map_err(|e| e.message().to_string());
        let f = file("rate = \"20k\"\nload = \"1.5M\"").unwrap();
        assert_eq!((f.rate, f.load), (20_000, Some(1.5e6)));
        let f = file("rate = 10000").unwrap();
        assert_eq!((f.rate, f.load), (10_000, None));
        assert!(file("rate = 2.5").unwrap_err().contains("a whole number"));
        assert!(file("rate = \"fast\"").unwrap_err().contains("\"10k\""));
    }

    #[test]
    fn ticks_use_the_axis_unit() {
        let unit = pps_unit(1.6e6);
        assert_eq!(format_tick(0.0, unit), "0");
        assert_eq!(format_tick(500_000.0, unit), "0.5 Mpps");
        assert_eq!(format_tick(1_500_000.0, unit), "1.5 Mpps");
    }
}
