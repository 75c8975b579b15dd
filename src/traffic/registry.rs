//! The generators a real lab can run, by their `LAB.toml` name. Adding one is a file in
//! `traffic/` implementing [`RemoteGenerator`] and its line here.

use super::pktgen::endpoint::Pktgen;
use super::remote::generator::{Benchlab, RemoteGenerator};
use super::trafgen::sender::Trafgen;

/// Every generator, the default (`benchlab`) first; messages list them in this order.
pub static GENERATORS: &[&dyn RemoteGenerator] = &[&Benchlab, &Pktgen, &Trafgen];

/// The generator `LAB.toml` calls `name`.
pub fn find(name: &str) -> Option<&'static dyn RemoteGenerator> {
    GENERATORS.iter().copied().find(|g| g.name() == name)
}

/// The generator of a sender that names none: benchlab's own.
pub fn default_generator() -> &'static dyn RemoteGenerator {
    GENERATORS[0]
}

/// The valid names for messages: `"benchlab", "pkt-gen", "trafgen"`.
pub fn names() -> String {
    let quoted: Vec<String> = GENERATORS
        .iter()
        .map(|g| format!("{:?}", g.name()))
        .collect();
    quoted.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_toml_names_find_their_generators_and_benchlab_is_the_default() {
        assert_eq!(names(), r#""benchlab", "pkt-gen", "trafgen""#);
        assert_eq!(default_generator().name(), "benchlab");
        let labels: Vec<_> = ["benchlab", "pkt-gen", "trafgen"]
            .iter()
            .map(|n| find(n).map(|g| g.label()))
            .collect();
        assert_eq!(
            labels,
            [Some("benchlab gen"), Some("pkt-gen -f tx"), Some("trafgen")]
        );
        assert!(find("pktgen").is_none());
        // Only pkt-gen counts with its own receiver and leaves CPU pinning to its host.
        let own: Vec<_> = GENERATORS.iter().map(|g| g.receiver().is_some()).collect();
        assert_eq!(own, [false, true, false]);
        let pins: Vec<_> = GENERATORS.iter().map(|g| g.pins_cpu()).collect();
        assert_eq!(pins, [true, false, true]);
    }
}
