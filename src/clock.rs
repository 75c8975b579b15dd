//! The wall clock every recorded time is read from: seconds since the Unix epoch, as `f64`,
//! so a trial's traffic window and a capture's window compare directly.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (0 on a clock set before 1970).
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
