//! The calling thread's network namespace, CPU affinity and signal mask.
//!
//! A trial runs the generator in the sender's namespace and samples counters in others, all from
//! one process: namespaces are entered per thread (`setns(2)` on a thread is allowed for network
//! namespaces), and a netlink socket keeps the namespace it was created in for its whole life.
// FFI: setns(2), sched_setaffinity(2), sched_setscheduler(2) and pthread_sigmask(3) have no safe
// std equivalent.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use anyhow::Context;

use crate::error::InputError;

/// Where benchlab keeps its state on this host while it runs: the labs' owners and topologies
/// (`lab`), a CPU's setting held awake (`awake/`).
pub const RUN_DIR: &str = "/run/benchlab";

/// Where `ip netns` keeps its named namespaces.
pub(crate) const NETNS_DIR: &str = "/run/netns";

/// Gives the calling thread real-time `priority` (SCHED_FIFO, 1 the lowest), so that it runs as
/// soon as it wakes, ahead of every ordinary thread on its CPU and of lower real-time ones.
pub fn realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pid 0 is the calling thread; `param` lives for the call.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Moves the calling thread into the named network namespace (`ip netns` name).
pub(crate) fn enter_netns(name: &str) -> anyhow::Result<()> {
    let path = PathBuf::from(NETNS_DIR).join(name);
    let file = File::open(&path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => anyhow::Error::new(InputError::new(format!(
            "no network namespace '{name}' ({} is missing; see `ip netns list`)",
            path.display()
        ))),
        _ => anyhow::Error::new(e).context(format!("opening {}", path.display())),
    })?;
    // SAFETY: setns only reads the descriptor, which `file` keeps open for the call.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EPERM) {
            return Err(InputError::new(format!(
                "entering network namespace '{name}' needs root (CAP_SYS_ADMIN)"
            ))
            .into());
        }
        return Err(e).with_context(|| format!("entering network namespace '{name}'"));
    }
    Ok(())
}

/// Runs `f` on a short-lived thread inside the named namespace (or this one when `None`).
///
/// Sockets that `f` creates stay in that namespace after the thread ends.
pub fn in_netns<T: Send>(
    netns: Option<&str>,
    f: impl FnOnce() -> anyhow::Result<T> + Send,
) -> anyhow::Result<T> {
    match netns {
        None => f(),
        Some(name) => std::thread::scope(|s| {
            s.spawn(|| {
                enter_netns(name)?;
                f()
            })
            .join()
            .unwrap_or_else(|_| {
                Err(anyhow::anyhow!(
                    "a thread working in namespace '{name}' panicked"
                ))
            })
        }),
    }
}

/// Number of CPUs this process may run on.
pub(crate) fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Pins the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> anyhow::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(
            InputError::new(format!("bad CPU {cpu}: this host has {} CPUs", cpu_count())).into(),
        );
    }
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set, CPU_SET stays within it (checked above).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) {
            return Err(InputError::new(format!(
                "bad CPU {cpu}: not one this process may use (it has {})",
                cpu_count()
            ))
            .into());
        }
        return Err(e).context(format!("pinning to CPU {cpu}"));
    }
    Ok(())
}

/// The calling thread's CPUs before [`avoid_cpu`] took one away, given back when dropped.
#[derive(Debug)]
pub(crate) struct CpuAvoidance {
    before: nix::sched::CpuSet,
}

impl Drop for CpuAvoidance {
    fn drop(&mut self) {
        // The thread keeps fewer CPUs if this fails, which costs speed, not correctness.
        let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &self.before);
    }
}

/// Keeps the calling thread, and the processes it starts from now on, off `cpu` until the
/// returned guard drops; `None` when `cpu` is the only CPU it may use.
///
/// A process started on the DUT's CPU waits behind its real-time NAPI kthread, which under a
/// saturating load leaves ordinary tasks only what RT throttling spares: tens to hundreds of
/// milliseconds per command, a config-set switch of a dozen commands lasting a second.
pub(crate) fn avoid_cpu(cpu: usize) -> anyhow::Result<Option<CpuAvoidance>> {
    use nix::sched::{sched_getaffinity, sched_setaffinity};
    let me = nix::unistd::Pid::from_raw(0);
    let before = sched_getaffinity(me).context("reading this thread's CPUs")?;
    if !before.is_set(cpu).unwrap_or(false) {
        return Ok(None);
    }
    let mut after = before;
    after
        .unset(cpu)
        .with_context(|| format!("CPU {cpu} cannot be left out"))?;
    let left = (0..nix::sched::CpuSet::count()).any(|c| after.is_set(c).unwrap_or(false));
    if !left {
        return Ok(None);
    }
    sched_setaffinity(me, &after).with_context(|| format!("keeping this thread off CPU {cpu}"))?;
    Ok(Some(CpuAvoidance { before }))
}

/// Keeps this host's CPUs out of idle states that take longer than a poll to leave, until the
/// returned file closes (a PM QoS request: `/dev/cpu_dma_latency` held at 0 µs; the kernel
/// drops it with the file, however the process ends). [`hold_cpu_awake`] keeps one CPU so.
///
/// On a VM an idle vCPU halts, and a frame that finds the virtual lab's DUT idle waits for the
/// hypervisor to run its CPU again: measured here, probes alone took 35 µs at P50 through the
/// DUT with halts, 6 µs without. That wait is the test machine's, not the DUT's; a testbed for
/// latency keeps its CPUs out of deep idle states the same way.
pub(crate) fn hold_cpus_awake() -> io::Result<File> {
    use std::io::Write;
    let mut qos = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")?;
    qos.write_all(&0i32.to_ne_bytes())?;
    Ok(qos)
}

/// One CPU held out of idle halts ([`hold_cpu_awake`]) while this lives.
#[derive(Debug)]
pub(crate) struct CpuAwake {
    /// Held shared while this lives: the last holder, alone to get it exclusive, restores.
    lock: nix::fcntl::Flock<File>,
    /// The CPU's `pm_qos_resume_latency_us`.
    knob: PathBuf,
    /// Its value before the first holder, kept until the last one writes it back.
    saved: PathBuf,
}

/// Keeps `cpu` out of idle states that take longer than a poll to leave (its PM QoS resume
/// latency, `pm_qos_resume_latency_us`, set to `n/a`: none tolerated), until the returned guard
/// drops and no other holder, in this process or another, remains.
///
/// Why one CPU rather than every one ([`hold_cpus_awake`]): a polling idle vCPU takes its
/// physical core from whatever shares it, and with every CPU held the virtual DUT forwarded
/// 1.4 % less at saturation (the generator's CPU polling beside it), with its own alone 0.4 %
/// less (within the noise), for the same latency: probes alone through the DUT 3.3 µs at P50
/// either way, 24–27 µs with halts (docs/latency.md). The kernel keeps this setting after the
/// process: the value before is saved beside the labs' run files, and a holder after a killed
/// one finds it and writes it back in the end.
pub(crate) fn hold_cpu_awake(cpu: usize) -> io::Result<CpuAwake> {
    let dir = PathBuf::from(RUN_DIR).join("awake");
    std::fs::create_dir_all(&dir)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(format!("cpu{cpu}.lock")))?;
    let lock = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockShared)
        .map_err(|(_, errno)| io::Error::from(errno))?;
    let knob = PathBuf::from(format!(
        "/sys/devices/system/cpu/cpu{cpu}/power/pm_qos_resume_latency_us"
    ));
    let saved = dir.join(format!("cpu{cpu}"));
    // Saved before the knob changes: a holder that finds no saved value finds the knob as it was.
    if !saved.exists() {
        crate::atomic::write(&saved, std::fs::read(&knob)?.trim_ascii())?;
    }
    std::fs::write(&knob, "n/a")?;
    Ok(CpuAwake { lock, knob, saved })
}

impl Drop for CpuAwake {
    fn drop(&mut self) {
        // Another holder keeps the lock shared, and the CPU awake: it restores in the end.
        if (self.lock)
            .relock(nix::fcntl::FlockArg::LockExclusiveNonblock)
            .is_err()
        {
            return;
        }
        if let Ok(value) = std::fs::read(&self.saved) {
            if std::fs::write(&self.knob, value).is_ok() {
                let _ = std::fs::remove_file(&self.saved);
            }
        }
    }
}

/// Blocks SIGINT and SIGTERM on the calling thread, so that they go to another thread and never
/// interrupt a system call in the middle of a counted batch.
pub(crate) fn block_stop_signals() -> io::Result<()> {
    // SAFETY: sigset_t is plain data initialised by sigemptyset; pthread_sigmask only reads it.
    let rc = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut())
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Whether the process runs with root's effective uid.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The signal that interrupts a sending thread inside the kernel: a real-time one, well clear
/// of glibc's own and of the usual ones.
fn wake_signal() -> libc::c_int {
    libc::SIGRTMIN() + 6
}

/// Installs the (empty) handler of the wake signal, once per process; without a handler the
/// signal would kill the process.
pub(crate) fn install_wake_handler() -> io::Result<()> {
    static INSTALLED: std::sync::OnceLock<Result<(), i32>> = std::sync::OnceLock::new();
    // SAFETY: the handler does nothing, which is async-signal-safe.
    let result = INSTALLED.get_or_init(|| unsafe {
        signal_hook::low_level::register(wake_signal(), || {})
            .map(|_| ())
            .map_err(|e| e.raw_os_error().unwrap_or(0))
    });
    (*result).map_err(io::Error::from_raw_os_error)
}

/// Sends the wake signal to a thread, so that a long system call it is in returns `EINTR`.
pub(crate) fn interrupt(thread: libc::pthread_t) {
    // SAFETY: `thread` comes from a JoinHandle that the caller has not joined yet, so it is valid.
    unsafe {
        libc::pthread_kill(thread, wake_signal());
    }
}

/// The calling thread's pthread id (for [`interrupt`]).
pub(crate) fn current_thread() -> libc::pthread_t {
    // SAFETY: pthread_self has no preconditions and cannot fail.
    unsafe { libc::pthread_self() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_holder_of_a_cpu_gives_it_back_its_setting() {
        let knob = "/sys/devices/system/cpu/cpu0/power/pm_qos_resume_latency_us";
        let (Ok(before), true) = (std::fs::read_to_string(knob), is_root()) else {
            return;
        };
        let now = || std::fs::read_to_string(knob).unwrap();
        let first = hold_cpu_awake(0).unwrap();
        let second = hold_cpu_awake(0).unwrap();
        assert_eq!(now().trim(), "n/a");
        drop(first);
        assert_eq!(now().trim(), "n/a", "the second holder still holds it");
        drop(second);
        assert_eq!(now(), before);
    }
}
