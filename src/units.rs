//! Rates and latencies as people read them: the one formatter of packets per second (and of
//! nanoseconds) that reports, charts and live progress lines share, so a figure reads the same
//! everywhere it appears.

/// A rate scaled for display with three significant digits: `1488125` → `1.49 Mpps`.
pub(crate) fn format_pps(pps: f64) -> String {
    let (scale, unit) = pps_unit(pps);
    format!("{} {unit}", trim_decimals(pps / scale, 3))
}

/// An axis tick of a rate axis labelled in the unit of [`pps_unit`]: `0` stays bare.
pub(crate) fn format_tick(value: f64, (scale, unit): (f64, &str)) -> String {
    if value == 0.0 {
        "0".to_string()
    } else {
        format!("{} {unit}", trim_decimals(value / scale, 3))
    }
}

/// A latency in nanoseconds with three significant digits in the unit that fits:
/// `850` → `850 ns`, `12_345` → `12.3 µs`, `4_500_000` → `4.5 ms`.
pub(crate) fn format_ns(ns: f64) -> String {
    let (scale, unit) = match ns.abs() {
        n if n >= 1e9 => (1e9, "s"),
        n if n >= 1e6 => (1e6, "ms"),
        n if n >= 1e3 => (1e3, "µs"),
        _ => (1.0, "ns"),
    };
    format!("{} {unit}", trim_decimals(ns / scale, 3))
}

/// The scale and unit a rate (or a rate axis up to `max`) is written in.
pub(crate) fn pps_unit(max: f64) -> (f64, &'static str) {
    if max >= 1e6 {
        (1e6, "Mpps")
    } else if max >= 1e3 {
        (1e3, "Kpps")
    } else {
        (1.0, "pps")
    }
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
    fn ticks_use_the_axis_unit() {
        let unit = pps_unit(1.6e6);
        assert_eq!(format_tick(0.0, unit), "0");
        assert_eq!(format_tick(500_000.0, unit), "0.5 Mpps");
        assert_eq!(format_tick(1_500_000.0, unit), "1.5 Mpps");
    }
}
