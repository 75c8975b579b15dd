//! Waiting for the next due time of a paced loop (a sender's next burst, a probe, a counter
//! sample) while staying stoppable: the one wait every thread of `traffic` uses.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Longest nap between two looks at the stop flag: a stop is seen within it.
const STEP: Duration = Duration::from_millis(20);

/// Waits until `due`, or until `stop` is raised (looked at every [`STEP`] at most; an
/// `unpark` of the thread looks at once): true when `due` came first. The last `spin` before
/// `due` is spun rather than slept, for loops that a sleep's overshoot (tens of µs) would
/// slow; `Duration::ZERO` only sleeps.
pub(crate) fn wait_until(due: Instant, stop: &AtomicBool, spin: Duration) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= due {
            return true;
        }
        let left = due - now;
        if left > 2 * spin {
            std::thread::park_timeout((left - spin).min(STEP));
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_true_at_the_due_time_and_false_once_stopped() {
        let stop = AtomicBool::new(false);
        let due = Instant::now() + Duration::from_millis(5);
        assert!(wait_until(due, &stop, Duration::from_micros(100)));
        assert!(Instant::now() >= due);
        stop.store(true, Ordering::Relaxed);
        assert!(!wait_until(
            Instant::now() + Duration::from_secs(60),
            &stop,
            Duration::ZERO
        ));
    }
}
