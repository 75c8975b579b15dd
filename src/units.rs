//! Rates and latencies as people read them: the one formatter of packets per second that
//! reports, charts and live progress lines share, and the one of nanoseconds that the latency
//! tables and charts share, so a figure reads the same everywhere it appears.

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
    fn ticks_use_the_axis_unit() {
        let unit = pps_unit(1.6e6);
        assert_eq!(format_tick(0.0, unit), "0");
        assert_eq!(format_tick(500_000.0, unit), "0.5 Mpps");
        assert_eq!(format_tick(1_500_000.0, unit), "1.5 Mpps");
    }
}
