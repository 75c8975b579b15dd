//! A bug that panics while a campaign holds the virtual lab must not leave the lab behind: the
//! lab's guard tears it down as the panic unwinds. Needs root (CI runs as root); builds one lab
//! whose id is this process's own, so it collides with no other test's.

use std::panic::{catch_unwind, AssertUnwindSafe};

use benchlab::campaign::bench::Bench;
use benchlab::campaign::virt::VirtualBench;
use benchlab::config::Campaign;
use benchlab::lab::{Lab, LabConfig};

mod common;
use common::lab_namespaces;

#[test]
fn a_panic_with_the_lab_up_and_a_config_set_applied_leaves_no_namespace() {
    let id = format!("p{}", std::process::id() % 100_000);
    let cfg = LabConfig::parse(&format!("id = \"{id}\""), "test").unwrap();
    let campaign = Campaign {
        config_sets: vec!["nft-stateful".into()],
        ..Campaign::default()
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut bench = VirtualBench::new(Lab::up(&cfg).unwrap(), &campaign).unwrap();
        bench.set_config("nft-stateful").unwrap();
        assert_eq!(lab_namespaces(&id).len(), 3, "the lab is up");
        panic!("a deliberate bug, with the lab up");
    }));
    assert!(outcome.is_err(), "the closure panicked");
    assert_eq!(lab_namespaces(&id), Vec::<String>::new());
    for ext in ["pid", "json"] {
        let record = format!("{}/{id}.{ext}", benchlab::lab::RUN_DIR);
        assert!(!std::path::Path::new(&record).exists(), "{record} left");
    }
}
