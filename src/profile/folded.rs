//! Folded stacks, the one model of a CPU profile: one `frame;frame;…;leaf count` line per
//! distinct stack (Brendan Gregg's format, which inferno reads and writes). Linux `perf script`
//! output is folded by [`fold_perf`], FreeBSD's `pmcstat -G` call graphs by
//! [`fold_pmcstat`](crate::profile::pmc::fold_pmcstat); everything after folding (checks, flamegraphs,
//! report) is the same for both.
//!
//! [`fold_perf`]: crate::profile::folded::fold_perf

use std::collections::BTreeMap;
use std::io::{self, BufRead};

use inferno::collapse::Collapse;

/// Frames of a CPU doing nothing: Linux's idle loop and cpuidle drivers, FreeBSD's idle thread.
pub(crate) const IDLE_FRAMES: &[&str] = &[
    "cpu_idle",
    "do_idle",
    "cpu_idle_poll",
    "default_idle",
    "default_idle_call",
    "arch_cpu_idle",
    "poll_idle",
    "cpuidle_enter",
    "cpuidle_enter_state",
    "acpi_idle_enter",
    "acpi_idle_do_entry",
    "intel_idle",
    "mwait_idle",
    "native_safe_halt",
    "pv_native_safe_halt",
    "sched_idletd",
    "sched_ule_idletd",
    "acpi_cpu_idle",
    "cpu_idle_acpi",
    "cpu_idle_hlt",
    "cpu_idle_mwait",
];

/// The most samples a profile may hold: 2^53, exact as a float, and far past any capture
/// (a year at 100 kHz is under 2^42).
pub(crate) const MAX_SAMPLES: u64 = 1 << 53;

/// Deepest call chain read: hwpmc records at most 512 frames (`PMC_CALLCHAIN_DEPTH_MAX`,
/// `kern.hwpmc.callchaindepth`) and perf 127 by default, so a deeper stack is no profiler's.
pub const MAX_DEPTH: usize = 512;
/// Longest function (or image) name read: kernel and C symbols are far shorter, and a longer
/// one only makes every stack through it that much longer.
pub const MAX_NAME_BYTES: usize = 4 << 10;

/// Folded stacks: each distinct stack (frames root first, `;`-separated) and its sample count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folded {
    /// Each stack and its samples.
    pub(crate) stacks: BTreeMap<String, u64>,
}

impl Folded {
    /// Parses folded-stack text (`perf.folded`); the error is the 1-based line that does not
    /// read, whose count takes the total past [`MAX_SAMPLES`], or whose stack is deeper than
    /// [`MAX_DEPTH`] or has a frame longer than [`MAX_NAME_BYTES`] or with a control character
    /// (a damaged file: the frames become flamegraph text).
    pub(crate) fn parse(text: &str) -> Result<Self, usize> {
        let mut folded = Folded::default();
        let mut samples: u64 = 0;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (stack, count) = line.rsplit_once(' ').ok_or(i + 1)?;
            let count: u64 = count.trim().parse().map_err(|_| i + 1)?;
            let mut frames = stack.split(';');
            let odd = |f: &str| f.len() > MAX_NAME_BYTES || f.contains(char::is_control);
            if frames.clone().count() > MAX_DEPTH || frames.any(odd) {
                return Err(i + 1);
            }
            // Bounded, so that no sum of counts (here, in the checks or in inferno) can wrap.
            samples = samples.saturating_add(count);
            if samples > MAX_SAMPLES {
                return Err(i + 1);
            }
            *folded.stacks.entry(stack.to_string()).or_default() += count;
        }
        Ok(folded)
    }

    /// The folded-stack text, one stack per line, sorted (as inferno wants its input).
    pub fn to_text(&self) -> String {
        self.stacks
            .iter()
            .map(|(stack, count)| format!("{stack} {count}\n"))
            .collect()
    }

    /// Total samples.
    pub fn samples(&self) -> u64 {
        // At most MAX_SAMPLES when parsed; saturating for profiles built otherwise.
        (self.stacks.values()).fold(0, |sum, &n| sum.saturating_add(n))
    }

    /// The stacks that are not idle (what the flamegraphs draw).
    pub(crate) fn without_idle(&self) -> Folded {
        Folded {
            stacks: (self.stacks.iter())
                .filter(|(stack, _)| !is_idle(stack))
                .map(|(s, &c)| (s.clone(), c))
                .collect(),
        }
    }
}

/// Folds `perf script` output (with call chains, from `perf record -g`) with inferno. Samples
/// count one each when `perf script` prints no period, their period otherwise.
pub(crate) fn fold_perf(perf_script: impl BufRead) -> io::Result<Folded> {
    let mut out = Vec::new();
    inferno::collapse::perf::Folder::default().collapse(perf_script, &mut out)?;
    let text = String::from_utf8_lossy(&out);
    Folded::parse(&text).map_err(|line| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("inferno's folded output does not read at line {line}"),
        )
    })
}

/// True for a stack of a CPU idling: it goes through an idle frame, and nothing after the last
/// one handles an interrupt (Linux runs softirqs, and so forwarding, on top of the idle task:
/// that is work, not idle).
pub(crate) fn is_idle(stack: &str) -> bool {
    let frames: Vec<&str> = stack.split(';').collect();
    let Some(last_idle) = frames.iter().rposition(|f| IDLE_FRAMES.contains(f)) else {
        return false;
    };
    !frames[last_idle + 1..]
        .iter()
        .any(|f| f.contains("irq") || f.starts_with("asm_") || f.starts_with("sysvec_"))
}
