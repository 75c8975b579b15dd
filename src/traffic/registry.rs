//! The generators a real lab can run, by their `LAB.toml` name. Adding one is a file in
//! `traffic/` implementing [`RemoteGenerator`] and its line here.
//!
//! [`RemoteGenerator`]: crate::traffic::remote::generator::RemoteGenerator

use super::remote::generator::RemoteGenerator;

/// Every generator, the default (`benchlab`) first; messages list them in this order. One
/// line each, by full path, so that adding one touches one line here.
pub(crate) static GENERATORS: &[&dyn RemoteGenerator] = &[
    &super::remote::generator::Benchlab,
    &super::pktgen::endpoint::Pktgen,
    &super::trafgen::sender::Trafgen,
];

/// The generator `LAB.toml` calls `name`.
pub(crate) fn find(name: &str) -> Option<&'static dyn RemoteGenerator> {
    GENERATORS.iter().copied().find(|g| g.name() == name)
}

/// The generator of a sender that names none: benchlab's own.
pub(crate) fn default_generator() -> &'static dyn RemoteGenerator {
    GENERATORS[0]
}

/// The valid names for messages: `"benchlab", "pkt-gen", "trafgen"`.
pub(crate) fn names() -> String {
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
        assert!(names().starts_with(r#""benchlab", "pkt-gen", "trafgen""#));
        assert_eq!(default_generator().name(), "benchlab");
        let found =
            |name: &str| find(name).map(|g| (g.label(), g.receiver().is_some(), g.pins_cpu()));
        // Only pkt-gen counts with its own receiver and leaves CPU pinning to its host.
        assert_eq!(found("benchlab"), Some(("benchlab gen", false, true)));
        assert_eq!(found("pkt-gen"), Some(("pkt-gen -f tx", true, false)));
        assert_eq!(found("trafgen"), Some(("trafgen", false, true)));
        assert_eq!(found("pktgen"), None);
    }

    #[test]
    fn every_generator_has_its_own_name() {
        let mut names: Vec<_> = GENERATORS.iter().map(|g| g.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), GENERATORS.len());
    }
}
