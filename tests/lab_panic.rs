//! A bug that panics while a campaign holds the virtual lab must not leave the lab behind: the
//! lab's guard tears it down as the panic unwinds. Needs root (CI runs as root); builds one lab
//! whose id is this process's own, so it collides with no other test's.

use std::panic::{catch_unwind, AssertUnwindSafe};

use benchlab::campaign::bench::Event;
use benchlab::campaign::context::Context;
use benchlab::cancel::Cancel;
use benchlab::config::Campaign;
use benchlab::lab::LabConfig;
use benchlab::store::Store;

mod common;
use common::lab_namespaces;

#[test]
fn a_panic_with_the_lab_up_and_a_config_set_applied_leaves_no_namespace() {
    let id = format!("p{}", std::process::id() % 100_000);
    let campaign = Campaign {
        lab: LabConfig::parse(&format!("id = \"{id}\""), "test").unwrap(),
        config_sets: vec!["nft-stateful".into()],
        ..Campaign::default()
    };
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::create(tmp.path(), &campaign).unwrap();
    let cancel = Cancel::new();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut on_event = |_: &Event<'_>| {};
        let mut ctx = Context::up(&campaign, &store, &cancel, None, &mut on_event).unwrap();
        ctx.bench.set_config("nft-stateful").unwrap();
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
