//! The rules of ARCHITECTURE.md, checked on the source tree: no module imports from a layer
//! above its own (so there is no import cycle between layers), no import cycle between files.
//!
//! Length is a smell, not a rule: a source file over 500 lines or a function over 80 is
//! reported as a warning (`lengths_warn`, shown by `scripts/test`), so that it is split along a
//! seam when it has one, never to pass a count; where it is long for a good reason the reason
//! is written in [`LONG_FILES`] or [`LONG_FNS`] and the warning is lifted.

use std::fs;
use std::path::{Path, PathBuf};

/// The layers, bottom first: a module may use its own layer and those before it.
const LAYERS: &[&[&str]] = &[
    &[
        "error", "atomic", "cancel", "clock", "file", "names", "units",
    ],
    &["stats", "search"],
    &["transport"],
    &["traffic"],
    &["lab"],
    &["config"],
    &["dut"],
    &["profile"],
    &["store"],
    &["ingest"],
    &["report"],
    &["history"],
    &["campaign"],
    &["cli"],
];

/// Lines past which a file is worth a second look.
const FILE_LINES: usize = 500;
/// Lines past which a function is worth a second look.
const FN_LINES: usize = 80;

/// Files long for a good reason, and the reason: no warning for them.
const LONG_FILES: &[(&str, &str)] = &[
    // Frame layouts and checksum vectors: tables, not logic.
    ("traffic/packet.rs", "packet tables"),
    // The hand-assembled XDP program is a table of BPF instructions.
    ("traffic/xdp.rs", "BPF instruction table"),
];

/// Import cycles between files that stand, as `no_import_cycle_between_files` names them, and
/// why: debt to pay, not a design. A cycle that is broken must leave this list.
const KNOWN_CYCLES: &[(&str, &str)] = &[];

/// What the report layer reads from: results (`ingest`, `store`), statistics and the base
/// modules, never the code that measures (ARCHITECTURE.md, "report").
const REPORT_READS: &[&str] = &[
    "error", "atomic", "file", "clock", "units", "stats", "search", "store", "ingest", "report",
];

/// Imports of the report layer beyond [`REPORT_READS`], and why.
const REPORT_ALSO: &[(&str, &str, &str)] = &[(
    "report/flame.rs",
    "profile",
    "folded stacks, the one model of a CPU profile, live with the profilers that make them",
)];

/// Functions long for a good reason, and the reason: no warning for them.
const LONG_FNS: &[(&str, &str, &str)] = &[
    (
        "traffic/xdp.rs",
        "program",
        "the BPF program, one instruction a line",
    ),
    (
        "campaign/trial.rs",
        "run",
        "the one trial procedure: its steps in the order the measurement needs, each comment \
         saying why a step comes where it does, and the profile's recording borrows its \
         profiler across them",
    ),
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source files below `src/`, as paths relative to it, with their text.
fn tree() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// A file's code: without its unit tests (`#[cfg(test)]` items to the end, or a test file).
fn code(rel: &str, text: &str) -> String {
    if rel.ends_with("/tests.rs") || rel.ends_with("/mock.rs") {
        return String::new();
    }
    let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn top_module(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap();
    first.strip_suffix(".rs").unwrap_or(first)
}

/// The top modules `code` names as `crate::<module>`, in order of appearance.
fn crate_uses(code: &str) -> Vec<String> {
    (code.match_indices("crate::"))
        .map(|(at, _)| {
            (code[at + 7..].chars())
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let mut wrong = Vec::new();
    for (rel, text) in tree() {
        let own = top_module(&rel);
        if matches!(own, "lib" | "main") {
            continue;
        }
        let own_layer = layer(own).unwrap_or_else(|| panic!("{rel}: module `{own}` has no layer"));
        for used in crate_uses(&code(&rel, &text)) {
            match layer(&used) {
                Some(l) if l > own_layer => wrong.push(format!("{rel}: uses crate::{used}")),
                Some(_) => {}
                None => wrong.push(format!("{rel}: crate::{used} has no layer")),
            }
        }
    }
    wrong.dedup();
    assert!(wrong.is_empty(), "upward imports:\n{}", wrong.join("\n"));
}

/// The functions of `code` longer than `max` lines: name and length. A function starts at a
/// line `fn name` and ends at the first `}` at its indentation.
fn long_functions(code: &str, max: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let sig = ["pub fn ", "pub(crate) fn ", "pub(super) fn ", "fn "]
            .iter()
            .find_map(|p| trimmed.strip_prefix(p));
        let Some(sig) = sig else {
            i += 1;
            continue;
        };
        let name: String = sig
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let mut j = i;
        while j < lines.len() && !lines[j].trim_end().ends_with('{') {
            if lines[j].trim_end().ends_with(';') {
                break;
            }
            j += 1;
        }
        if j >= lines.len() || lines[j].trim_end().ends_with(';') {
            i = j + 1;
            continue;
        }
        let close = " ".repeat(indent) + "}";
        let end = (j + 1..lines.len())
            .find(|&k| lines[k].starts_with(&close) && !lines[k][indent..].starts_with("} else"))
            .unwrap_or(lines.len() - 1);
        if end - i + 1 > max {
            found.push((name, end - i + 1));
        }
        i = end + 1;
    }
    found
}

/// Files over [`FILE_LINES`] and functions over [`FN_LINES`] (tests aside), with their length
/// and the reason they are long when one is written down.
fn long_items() -> Vec<(String, Option<&'static str>)> {
    let mut long = Vec::new();
    for (rel, text) in tree() {
        let lines = text.lines().count();
        if !rel.ends_with("/tests.rs") && lines > FILE_LINES {
            let why = LONG_FILES.iter().find(|(f, _)| *f == rel).map(|(_, w)| *w);
            long.push((format!("{rel}: {lines} lines"), why));
        }
        for (name, n) in long_functions(&code(&rel, &text), FN_LINES) {
            let why = (LONG_FNS.iter())
                .find(|(f, fname, _)| *f == rel && *fname == name)
                .map(|(_, _, w)| *w);
            long.push((format!("{rel}: fn {name}: {n} lines"), why));
        }
    }
    long
}

/// Prints a warning per long file or function with no reason written down; never fails.
#[test]
fn lengths_warn() {
    for (item, why) in long_items() {
        if why.is_none() {
            eprintln!(
                "warning: {item} (over {FILE_LINES} per file or {FN_LINES} per function): \
                 split it along a seam if it has one, or write down why it is long in \
                 tests/offline/architecture.rs"
            );
        }
    }
}

/// A reason stays written only while its file or function is long: a stale one would lift
/// the warning from whatever grows there next.
#[test]
fn every_written_reason_is_for_something_long() {
    let long = long_items();
    let files = LONG_FILES.iter().map(|(f, _)| format!("{f}: "));
    let fns = LONG_FNS.iter().map(|(f, n, _)| format!("{f}: fn {n}: "));
    let stale: Vec<String> = files
        .chain(fns)
        .filter(|p| !long.iter().any(|(item, _)| item.starts_with(p.as_str())))
        .collect();
    assert!(
        stale.is_empty(),
        "reasons for what is no longer long: {stale:?}"
    );
}

#[test]
fn the_function_scanner_measures_what_it_should() {
    let code = "fn a() {\n    x;\n}\n\nfn b() -> u8 {\n    if y {\n    } else {\n    }\n    1\n}\n";
    assert_eq!(
        long_functions(code, 2),
        [("a".to_string(), 3), ("b".into(), 6)]
    );
    assert!(long_functions(code, 6).is_empty());
}

/// A source file's module path: `lab/ssh.rs` is `lab::ssh`, `lab.rs` is `lab`, `lib.rs` the
/// crate root (empty).
fn module_of(rel: &str) -> Vec<String> {
    let stem = rel.strip_suffix(".rs").unwrap_or(rel);
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    match stem {
        "lib" => Vec::new(),
        _ => stem.split('/').map(str::to_string).collect(),
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The path tree starting at byte `i` of `code`: each path with the name it binds (its last
/// segment, the prefix for `self`, or its `as` alias), and where the tree ends. `a::{b, c::d}`
/// is `a::b` and `a::c::d`.
fn path_tree(code: &[u8], mut i: usize) -> (Vec<(Vec<String>, String)>, usize) {
    let skip_space = |mut i: usize| {
        while i < code.len() && code[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut prefix = Vec::new();
    loop {
        let start = i;
        while i < code.len() && is_ident(code[i]) {
            i += 1;
        }
        prefix.push(String::from_utf8_lossy(&code[start..i]).to_string());
        if !code[i..].starts_with(b"::") {
            break;
        }
        i += 2;
        if code.get(i) == Some(&b'{') {
            let mut found = Vec::new();
            i = skip_space(i + 1);
            while i < code.len() && code[i] != b'}' {
                let (sub, end) = path_tree(code, i);
                for (path, name) in sub {
                    match path == ["self"] {
                        // `a::{self}` is `a` itself, bound as `a`.
                        true => {
                            found.push((prefix.clone(), prefix.last().cloned().unwrap_or_default()))
                        }
                        false => found.push(([prefix.clone(), path].concat(), name)),
                    }
                }
                i = skip_space(end);
                i = skip_space(i + usize::from(code.get(i) == Some(&b',')));
            }
            return (found, i + 1);
        }
        if !code.get(i).copied().is_some_and(is_ident) {
            // A glob (`a::*`) or a turbofish (`a::<T>`): the path ends at its prefix.
            break;
        }
    }
    let mut name = prefix.last().cloned().unwrap_or_default();
    let after = skip_space(i);
    if code[after..].starts_with(b"as ") {
        let (alias, end) = path_tree(code, skip_space(after + 3));
        name = alias.first().map(|(p, _)| p[0].clone()).unwrap_or(name);
        i = end;
    }
    (vec![(prefix, name)], i)
}

/// Every path of `code` with a `::` in it (`use` trees expanded), with the name it binds.
fn paths(code: &str) -> Vec<(Vec<String>, String)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let inside = i > 0 && (is_ident(bytes[i - 1]) || matches!(bytes[i - 1], b':' | b'.'));
        if !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') || inside {
            i += 1;
            continue;
        }
        let (tree, end) = path_tree(bytes, i);
        found.extend(tree.into_iter().filter(|(p, _)| p.len() > 1));
        i = end.max(i + 1);
    }
    found
}

/// What one file names: its module, child modules, imports and paths.
struct Unit {
    module: Vec<String>,
    children: Vec<String>,
    /// `use` bindings (name → absolute path): children see them through `super::`, and
    /// `pub use` re-exports them.
    imports: Vec<(String, Vec<String>)>,
    /// The absolute paths its code names.
    uses: Vec<Vec<String>>,
}

impl Unit {
    fn new(rel: &str, code: &str) -> Unit {
        let module = module_of(rel);
        let children: Vec<String> = code
            .lines()
            .filter_map(|l| {
                let l = l.trim_start();
                let l = ["pub ", "pub(crate) ", "pub(super) "]
                    .iter()
                    .find_map(|p| l.strip_prefix(p))
                    .unwrap_or(l);
                Some(l.strip_prefix("mod ")?.strip_suffix(';')?.to_string())
            })
            .collect();
        let mut unit = Unit {
            module,
            children,
            imports: Vec::new(),
            uses: Vec::new(),
        };
        for (at, _) in code.match_indices("use ") {
            if at > 0 && is_ident(code.as_bytes()[at - 1]) {
                continue;
            }
            let (tree, _) = path_tree(code.as_bytes(), at + 4);
            for (path, name) in tree {
                if let Some(abs) = unit.absolute(&path) {
                    unit.imports.push((name, abs));
                }
            }
        }
        unit.uses = paths(code)
            .into_iter()
            .filter_map(|(p, _)| unit.absolute(&p))
            .collect();
        unit
    }

    /// `path` from the crate root, if it is one of the crate's (`crate::`, `super::`,
    /// `self::` or a child module of this file).
    fn absolute(&self, path: &[String]) -> Option<Vec<String>> {
        let first = path.first()?.as_str();
        if first == "crate" {
            return Some(path[1..].to_vec());
        }
        if first == "self" || self.children.iter().any(|c| c == first) {
            let rest = &path[usize::from(first == "self")..];
            return Some([self.module.clone(), rest.to_vec()].concat());
        }
        let ups = path.iter().take_while(|s| *s == "super").count();
        let base = self.module.len().checked_sub(ups).filter(|_| ups > 0)?;
        Some([self.module[..base].to_vec(), path[ups..].to_vec()].concat())
    }
}

/// The file an absolute path lands in: the deepest file module on it, followed through that
/// file's imports (a parent's `pub use child::Item`) when the rest names one.
fn file_of(units: &[Unit], path: &[String], depth: usize) -> Option<usize> {
    let (at, len) = (0..=path.len())
        .rev()
        .find_map(|n| Some((units.iter().position(|u| u.module == path[..n])?, n)))?;
    let import = path.get(len).and_then(|name| {
        let (_, target) = units[at].imports.iter().find(|(n, _)| n == name)?;
        Some([target.clone(), path[len + 1..].to_vec()].concat())
    });
    match import {
        Some(target) if depth < 8 && target != path => {
            file_of(units, &target, depth + 1).or(Some(at))
        }
        _ => Some(at),
    }
}

/// The import graph between source files: `edges[a]` holds the files whose items file `a`
/// names, its own ancestors left out.
fn import_graph(units: &[Unit]) -> Vec<Vec<usize>> {
    units
        .iter()
        .enumerate()
        .map(|(a, unit)| {
            let mut to: Vec<usize> = unit
                .uses
                .iter()
                .filter_map(|p| file_of(units, p, 0))
                .filter(|&b| b != a && !unit.module.starts_with(&units[b].module))
                .collect();
            to.sort_unstable();
            to.dedup();
            to
        })
        .collect()
}

/// One cycle through each strongly connected part of `edges` with more than one file, as
/// file indices, first file repeated last.
fn cycles(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    // 0: not seen, 1: on the current path, 2: done.
    let mut state = vec![0u8; edges.len()];
    let mut found = Vec::new();
    fn visit(
        a: usize,
        edges: &[Vec<usize>],
        state: &mut [u8],
        path: &mut Vec<usize>,
        found: &mut Vec<Vec<usize>>,
    ) {
        state[a] = 1;
        path.push(a);
        for &b in &edges[a] {
            match state[b] {
                0 => visit(b, edges, state, path, found),
                1 => {
                    let from = path.iter().position(|&p| p == b).unwrap();
                    found.push([&path[from..], &[b]].concat());
                }
                _ => {}
            }
        }
        path.pop();
        state[a] = 2;
    }
    for a in 0..edges.len() {
        if state[a] == 0 {
            visit(a, edges, &mut state, &mut Vec::new(), &mut found);
        }
    }
    found
}

/// The import cycles between the crate's files, named `a.rs -> b.rs -> a.rs` from the first
/// file in byte order, so that a cycle reads the same whatever the scan order.
fn import_cycles(files: &[(String, String)]) -> Vec<String> {
    let files: Vec<&(String, String)> = files.iter().filter(|(r, _)| r != "main.rs").collect();
    let units: Vec<Unit> = files
        .iter()
        .map(|(r, t)| Unit::new(r, &code(r, t)))
        .collect();
    cycles(&import_graph(&units))
        .into_iter()
        .map(|mut c| {
            c.pop();
            let names: Vec<&str> = c.iter().map(|&i| files[i].0.as_str()).collect();
            let first = (0..names.len()).min_by_key(|&i| names[i]).unwrap_or(0);
            let mut ring = [&names[first..], &names[..first]].concat();
            ring.push(ring[0]);
            ring.join(" -> ")
        })
        .collect()
}

/// No import cycle between files, inside a layer or a module: a file `a` depends on a file `b`
/// when its code names an item of `b` (through `crate::`, `super::`, `self::` or a child
/// module's name, `use` trees expanded, resolved to the deepest file module on the path and
/// through re-exports and imports of the file it lands in). A file naming its own parent's (or
/// any ancestor's) items is left out: `foo.rs` declaring `mod bar;` while `foo/bar.rs` uses
/// `super::` items is how Rust modules work, the parent being the child's context. Every other
/// cycle — between siblings, cousins, or across modules of one layer — is reported.
#[test]
fn no_import_cycle_between_files() {
    let files = tree();
    let found = import_cycles(&files);
    let new: Vec<&str> = (found.iter().map(String::as_str))
        .filter(|c| !KNOWN_CYCLES.iter().any(|(k, _)| k == c))
        .collect();
    let gone: Vec<&str> = (KNOWN_CYCLES.iter().map(|(k, _)| *k))
        .filter(|k| !found.iter().any(|c| c == k))
        .collect();
    assert!(
        new.is_empty(),
        "import cycles (move what both files need to the lower one, or to a new small file):\n{}",
        new.join("\n")
    );
    assert!(
        gone.is_empty(),
        "cycles broken, to take off KNOWN_CYCLES:\n{}",
        gone.join("\n")
    );
}

#[test]
fn the_cycle_scanner_finds_sibling_cycles_and_not_parent_and_child() {
    let file = |rel: &str, text: &str| (rel.to_string(), text.to_string());
    let parent_and_child = [
        file(
            "a.rs",
            "mod b;\npub use b::B;\nfn f() { b::g(); }\npub struct A;\n",
        ),
        file("a/b.rs", "use super::A;\npub struct B;\npub fn g() {}\n"),
    ];
    assert!(import_cycles(&parent_and_child).is_empty());
    let siblings = [
        file("a.rs", "pub mod b;\npub mod c;\npub use c::C;\n"),
        file("a/b.rs", "use super::{c::{self, C}, A};\n"),
        file(
            "a/c.rs",
            "pub struct C;\nfn f() -> crate::a::b::B { todo!() }\n",
        ),
        file("d.rs", "use crate::a::C;\n"),
    ];
    assert_eq!(import_cycles(&siblings), ["a/b.rs -> a/c.rs -> a/b.rs"]);
    let through_reexport = [
        file("a.rs", "mod b;\nmod c;\npub use c::C;\n"),
        file("a/b.rs", "pub struct B;\nfn f(_: super::C) {}\n"),
        file("a/c.rs", "pub struct C(crate::a::b::B);\n"),
    ];
    assert_eq!(
        import_cycles(&through_reexport),
        ["a/b.rs -> a/c.rs -> a/b.rs"]
    );
}

#[test]
fn the_report_reads_only_results_and_statistics() {
    let mut wrong = Vec::new();
    for (rel, text) in tree()
        .into_iter()
        .filter(|(r, _)| top_module(r) == "report")
    {
        for used in crate_uses(&code(&rel, &text)) {
            let also = REPORT_ALSO.iter().any(|(f, m, _)| *f == rel && *m == used);
            if !REPORT_READS.contains(&used.as_str()) && !also {
                wrong.push(format!("{rel}: uses crate::{used}"));
            }
        }
    }
    wrong.dedup();
    assert!(wrong.is_empty(), "report imports:\n{}", wrong.join("\n"));
}
