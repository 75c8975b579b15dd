//! A config set directory named in a campaign file is relative to that file, wherever benchlab
//! runs from, and the results directory records it as an absolute path: reading the results
//! needs it no more, and resuming from another directory finds it (or names it if it moved).
//! No lab is built (`run --check`).

use std::path::Path;
use std::process::Command;

use benchlab::config::{defaults::CONFIG_SETS, Campaign};
use benchlab::store::Store;

/// benchlab `args` run in `cwd`: exit status and stderr.
fn benchlab(cwd: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_benchlab"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stderr)
}

#[test]
fn a_config_set_directory_is_relative_to_the_campaign_file_and_recorded_absolute() {
    let tmp = tempfile::tempdir().unwrap();
    let (files, elsewhere) = (tmp.path().join("campaigns"), tmp.path().join("elsewhere"));
    std::fs::create_dir_all(files.join("my-set")).unwrap();
    std::fs::write(files.join("my-set/apply"), "#!/bin/sh\n").unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let file = files.join("c.toml");
    let toml = "design = \"trials\"\niterations = 3\nconfig_sets = [\"forwarding\", \"my-set\"]\n";
    std::fs::write(&file, toml).unwrap();

    // Checked relative to the file, from any working directory.
    let (code, stderr) = benchlab(&elsewhere, &["run", "../campaigns/c.toml", "--check"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stderr) = benchlab(&files, &["run", "c.toml", "--check"]);
    assert_eq!(code, 0, "{stderr}");

    // Recorded absolute in the results directory.
    let campaign = Campaign::load(&file, &CONFIG_SETS).unwrap();
    let set = std::fs::canonicalize(files.join("my-set")).unwrap();
    assert_eq!(campaign.config_sets[1], set.display().to_string());
    let results = tmp.path().join("results");
    drop(Store::create(&results, &campaign).unwrap());
    let results = results.display().to_string();
    let (code, stderr) = benchlab(&elsewhere, &["run", "--resume", &results, "--check"]);
    assert_eq!(code, 0, "{stderr}");

    // The set moved: its results still read, and resuming names the missing directory.
    std::fs::rename(files.join("my-set"), files.join("moved")).unwrap();
    let stored = Store::stored_campaign(Path::new(&results), &CONFIG_SETS).unwrap();
    assert_eq!(stored.config_sets, campaign.config_sets);
    let (code, stderr) = benchlab(&elsewhere, &["run", "--resume", &results, "--check"]);
    assert_eq!((code, stderr.lines().count()), (2, 1), "{stderr}");
    assert!(stderr.contains(&set.display().to_string()), "{stderr}");
}
