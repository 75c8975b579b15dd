//! The wall clock every recorded time is read from: seconds since the Unix epoch, as `f64`,
//! so a trial's traffic window and a capture's window compare directly.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (0 on a clock set before 1970).
pub(crate) fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A number of seconds as a [`Duration`](std::time::Duration), saturating instead of
/// panicking: NaN and negative values are zero, infinite or huge ones the longest duration
/// (seconds computed from a damaged results file must not panic `Duration::from_secs_f64`).
pub(crate) fn saturating_secs(secs: f64) -> std::time::Duration {
    match std::time::Duration::try_from_secs_f64(secs) {
        Ok(d) => d,
        Err(_) if secs > 0.0 => std::time::Duration::MAX,
        Err(_) => std::time::Duration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn seconds_saturate_instead_of_panicking() {
        assert_eq!(saturating_secs(1.5), Duration::from_millis(1500));
        assert_eq!(saturating_secs(f64::NAN), Duration::ZERO);
        assert_eq!(saturating_secs(-1.0), Duration::ZERO);
        assert_eq!(saturating_secs(f64::INFINITY), Duration::MAX);
        assert_eq!(saturating_secs(1e300), Duration::MAX);
    }
}
