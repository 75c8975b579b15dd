//! Unit tests of `profile`.

use super::*;

#[test]
fn sample_times_come_from_the_event_headers() {
    let text = b"napi/blt-12 123 [001] 1700000001.500000: cpu-clock:ppp: \n\
            \tffffffff81 ip_forward+0x1 ([kernel.kallsyms])\n\n\
            lto cgu.00 99 [001] 1700000000.250000: cpu-clock:ppp: \n\
            \tffffffff81 memset+0x1 ([kernel.kallsyms])\n";
    assert_eq!(sample_times(text), Some((1700000000.25, 1700000001.5)));
    assert_eq!(sample_times(b""), None);
}

/// A profiler that records nothing but what was asked of it, and when.
struct MockProfiler {
    log: std::cell::RefCell<Vec<(&'static str, Instant)>>,
}

impl MockProfiler {
    fn events(&self) -> Vec<&'static str> {
        self.log.borrow().iter().map(|(e, _)| *e).collect()
    }

    fn when(&self, event: &str) -> Instant {
        self.log
            .borrow()
            .iter()
            .find(|(e, _)| *e == event)
            .unwrap()
            .1
    }
}

struct MockRecording<'a>(&'a MockProfiler);

impl Profiler for MockProfiler {
    fn start(&self) -> anyhow::Result<Box<dyn Recording + '_>> {
        self.log.borrow_mut().push(("start", Instant::now()));
        Ok(Box::new(MockRecording(self)))
    }
}

impl Recording for MockRecording<'_> {
    fn resume(&mut self) -> anyhow::Result<()> {
        self.0.log.borrow_mut().push(("resume", Instant::now()));
        Ok(())
    }

    fn halt(&mut self) -> anyhow::Result<()> {
        self.0.log.borrow_mut().push(("halt", Instant::now()));
        Ok(())
    }

    fn stop(self: Box<Self>) -> anyhow::Result<CaptureResult> {
        self.0.log.borrow_mut().push(("fold", Instant::now()));
        Ok(CaptureResult {
            folded: Folded::default(),
            window: CaptureWindow {
                start_unix_s: 0.0,
                end_unix_s: 0.0,
                cpus: vec![1],
                command: "mock".into(),
                setup_s: None,
            },
        })
    }
}

#[test]
fn a_schedule_resumes_after_warmup_halts_before_cooldown_and_folds_after_the_traffic() {
    let p = MockProfiler {
        log: Default::default(),
    };
    let trial = crate::config::Trial {
        duration: Duration::from_millis(500),
        warmup: Duration::from_millis(200),
        cooldown: Duration::from_millis(100),
        latency: false,
    };
    // The profiler is started (paused) before the traffic.
    let recording = p.start().unwrap();
    let t0 = Instant::now();
    let mut s = CaptureSchedule::new(recording, t0, &trial, Duration::ZERO);
    // The trial loop polls as it goes; lower bounds only: a loaded machine is late, never early.
    while s.until_next().is_some() {
        s.poll().unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        p.events(),
        ["start", "resume", "halt"],
        "halted in the trial loop"
    );
    assert!(p.when("resume") >= t0 + Duration::from_millis(200));
    assert!(p.when("halt") >= t0 + Duration::from_millis(400));
    s.finish(&Cancel::new()).unwrap();
    assert_eq!(
        p.events(),
        ["start", "resume", "halt", "fold"],
        "folded after the traffic"
    );
}
