//! Profiling a FreeBSD DUT over SSH with pmcstat, on the sshd-in-namespace lab (tests/sshd):
//! the DUT's sshd puts stand-ins first on its PATH — `uname` says FreeBSD, `kldstat`/`kldload`
//! play hwpmc's module, `pmcstat` records its command lines and times, samples until SIGINT
//! and, for `-R … -G GRAPH`, writes seed 002's recorded call graph. Checked: the command lines,
//! that sampling ran inside the window (after warm-up, stopped before cool-down), that the graph
//! folded into the trial's flamegraph, that the remote files are gone; then a DUT without
//! hwpmc: one warning, the campaign goes on, the report says why. Needs root and sshd.

use std::fs;
use std::path::{Path, PathBuf};

use crate::sshd::SshNodes;
use benchlab::profile::pmc::fold_pmcstat;

/// The recorded call graph the stand-in pmcstat writes (seed 002, 4 CPUs).
fn recorded_graph() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/netbenches/002/RAW/bench.318516current.forwarding.inet4.1.pmc.graph")
}

/// Seconds pmcstat's stand-in spends setting up before its log has data.
const STANDIN_SETUP_S: f64 = 0.3;

/// Writes the FreeBSD stand-ins into `bin`, keeping their state and logs in `state`.
fn write_standins(bin: &Path, state: &Path) {
    fs::create_dir_all(bin).unwrap();
    let s = state.display();
    let scripts = [
        (
            "uname",
            "case \"$1\" in -s) echo FreeBSD;; \
             *) echo 'FreeBSD blssh-dut 14.1-RELEASE FreeBSD 14.1-RELEASE GENERIC amd64';; esac"
                .to_string(),
        ),
        (
            "kldstat",
            format!("echo \"kldstat $*\" >> {s}/kld.log; [ -e {s}/hwpmc-loaded ]"),
        ),
        (
            "kldload",
            format!(
                "echo \"kldload $*\" >> {s}/kld.log\n\
                 if [ -e {s}/no-hwpmc ]; then \
                 echo \"kldload: can't load $1: No such file or directory\" >&2; exit 1; fi\n\
                 touch {s}/hwpmc-loaded"
            ),
        ),
        (
            "pmcstat",
            format!(
                "log={s}/pmcstat.log\n\
                 echo \"$(date +%s.%N) pmcstat $*\" >> $log\n\
                 if [ \"$1\" = -R ]; then cp {graph} \"$6\"; exit 0; fi\n\
                 out=$4\n\
                 if [ $# -gt 4 ]; then shift 4; \"$@\"; echo probe > \"$out\"; exit 0; fi\n\
                 trap 'echo \"$(date +%s.%N) stop\" >> $log; echo end >> \"$out\"; exit 0' INT\n\
                 sleep {STANDIN_SETUP_S}\n\
                 echo \"$(date +%s.%N) sampling\" >> $log\n\
                 echo samples > \"$out\"\n\
                 while :; do sleep 0.05; done",
                graph = recorded_graph().display()
            ),
        ),
    ];
    for (name, body) in scripts {
        let path = bin.join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        crate::sshd::sh(&["chmod", "+x", path.to_str().unwrap()]);
    }
}

/// The campaign file: one version, a config set of our own (the FreeBSD presets would write
/// /etc files, and the DUT's files are this machine's), one profile, 5 s trials (3 measured seconds).
fn campaign(nodes: &SshNodes, facts: &benchlab::lab::LabFacts, dir: &Path, event: &str) -> String {
    let set = dir.join("fwd");
    fs::create_dir_all(&set).unwrap();
    fs::write(set.join("apply"), "sysctl -qw net.ipv4.ip_forward=1\n").unwrap();
    let lab = nodes.three_node_toml(facts);
    // The DUT's table gets the event pmcstat samples.
    let lab = lab.replace(
        "host = \"blssh-dut\"\n",
        &format!("host = \"blssh-dut\"\npmc_event = \"{event}\"\n"),
    );
    format!(
        "title = \"pmcstat over SSH\"\niterations = 1\nprofile = true\norder = \"sequential\"\n\
         config_sets = [\"{}\"]\n\n{lab}\n[trial]\nduration = 5\nwarmup = 1\ncooldown = 1\n\n\
         [[profiles]]\nname = \"inet4\"\naf = \"inet4\"\nrate = 10000\n\n\
         [[versions]]\nname = \"v1\"\n",
        set.display()
    )
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// `(time, words)` of the stand-in pmcstat's log lines.
fn pmcstat_log(state: &Path) -> Vec<(f64, String)> {
    fs::read_to_string(state.join("pmcstat.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let (t, rest) = l.split_once(' ').unwrap();
            (t.parse().unwrap(), rest.to_string())
        })
        .collect()
}

#[test]
fn a_freebsd_dut_is_profiled_with_pmcstat_inside_the_window_and_without_hwpmc_goes_on() {
    let scratch = tempfile::tempdir().unwrap();
    let (bin, state) = (scratch.path().join("bin"), scratch.path().join("state"));
    fs::create_dir_all(&state).unwrap();
    write_standins(&bin, &state);
    let path = format!(
        "SetEnv PATH={}:/usr/sbin:/usr/bin:/sbin:/bin\n",
        bin.display()
    );
    let (lab, nodes) = crate::sshd::three_nodes("tp1", &[("blssh-dut", &path)]);
    let facts = lab.facts().clone();
    let dir = nodes.keys.dir();
    let file = dir.join("pmc.toml");
    let event = "cpu_clk_unhalted.thread_p";
    fs::write(&file, campaign(&nodes, &facts, dir, event)).unwrap();
    let results = dir.join("results");
    let out = nodes.run_campaign(&file, &results);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");

    // hwpmc was loaded once (the check), then found loaded before the capture.
    let kld = fs::read_to_string(state.join("kld.log")).unwrap();
    assert_eq!(
        kld,
        "kldstat -q -m hwpmc\nkldload hwpmc\nkldstat -q -m hwpmc\n"
    );
    let log = pmcstat_log(&state);
    let words: Vec<&str> = log.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(words.len(), 5, "{words:?}");
    let tmp = |w: &str, file: &str| {
        let start = w.find("/tmp/benchlab-pmc.").unwrap();
        let path = w[start..].split(' ').next().unwrap().to_string();
        assert!(path.ends_with(file), "{w}");
        path.trim_end_matches(file).to_string()
    };
    let probe_dir = tmp(words[0], "/probe.out");
    assert_eq!(
        words[0],
        format!("pmcstat -S {event} -O {probe_dir}/probe.out true")
    );
    let run_dir = tmp(words[1], "/pmc.out");
    assert_eq!(words[1], format!("pmcstat -S {event} -O {run_dir}/pmc.out"));
    assert_eq!(words[2], "sampling");
    assert_eq!(words[3], "stop");
    assert_eq!(
        words[4],
        format!("pmcstat -R {run_dir}/pmc.out -z 16 -G {run_dir}/pmc.graph")
    );
    // The remote files are gone.
    assert!(!Path::new(&probe_dir).exists() && !Path::new(&run_dir).exists());

    // Sampling ran inside the window: launched after warm-up, stopped before cool-down.
    let trial = results.join("runs/v1.fwd.inet4.profile");
    let meta = json(&trial.join("meta.json"));
    let start = meta["start_unix_s"].as_f64().unwrap();
    let end = meta["end_unix_s"].as_f64().unwrap();
    let (launched, stopped) = (log[1].0, log[3].0);
    assert!(launched >= start + 1.0, "{launched} vs {start}");
    assert!(launched + 1.0 < stopped, "{launched} vs {stopped}");
    assert!(stopped >= start + 4.0, "{stopped} vs {start}");
    assert!(stopped < end - 0.5, "{stopped} vs {end}");
    // Its setup (the stand-in's 0.3 s, plus SSH) is measured and kept.
    let setup = meta["capture"]["setup_s"].as_f64().unwrap();
    assert!((STANDIN_SETUP_S..2.0).contains(&setup), "{meta}");
    eprintln!(
        "window {launched:.3}..{stopped:.3} of traffic {start:.3}..{end:.3}, setup {setup:.3} s"
    );
    assert_eq!(
        meta["capture"]["command"],
        format!("pmcstat -S {event} -O {run_dir}/pmc.out")
    );

    // The fetched graph is the trial's capture, drawn in the report.
    let graph = fs::read(recorded_graph()).unwrap();
    let expected = fold_pmcstat(graph.as_slice(), "graph").unwrap().to_text();
    assert_eq!(
        fs::read_to_string(trial.join("perf.folded")).unwrap(),
        expected
    );
    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    assert!(readme.contains("## Flamegraphs"), "{readme}");
    assert!(readme.contains("(flame/v1.fwd.inet4.svg)"), "{readme}");
    assert!(readme.contains("s of the window to set up"), "{readme}");
    assert!(results.join("flame/v1.fwd.inet4.svg").is_file());

    // A DUT without hwpmc: one warning, the campaign goes on, the report says why.
    fs::remove_file(state.join("hwpmc-loaded")).unwrap();
    fs::write(state.join("no-hwpmc"), "").unwrap();
    let results = dir.join("results-2");
    let out = nodes.benchlab(&[
        "run",
        file.to_str().unwrap(),
        "-o",
        results.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let why = "no flamegraphs: blssh-dut has no hwpmc (kldload: can't load hwpmc: No such file \
               or directory): a VM, or a kernel without hwpmc, cannot be profiled";
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("hwpmc")).collect();
    assert_eq!(warnings, [format!("warning: {why}")], "{err}");
    assert_eq!(pmcstat_log(&state).len(), 5, "pmcstat ran without hwpmc");
    assert!(results
        .join("runs/v1.fwd.inet4.profile/meta.json")
        .is_file());
    assert!(results.join("runs/v1.fwd.inet4.1/meta.json").is_file());
    let readme = fs::read_to_string(results.join("README.md")).unwrap();
    assert!(readme.contains(&format!("  - {why}\n")), "{readme}");
    assert!(!readme.contains("## Flamegraphs"), "{readme}");
    drop(nodes);
    drop(lab);
}
