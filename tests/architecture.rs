//! The rules of ARCHITECTURE.md, checked on the source tree: no module imports from a layer
//! above its own (so there is no import cycle between layers), no source file over 500 lines,
//! no function over 80 lines (tests and data tables aside).

use std::fs;
use std::path::{Path, PathBuf};

/// The layers, bottom first: a module may use its own layer and those before it.
const LAYERS: &[&[&str]] = &[
    &["error", "atomic", "cancel", "clock", "file", "units"],
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
    &["campaign"],
    &["cli"],
];

/// Files allowed past 500 lines, and why.
const LONG_FILES: &[(&str, &str)] = &[
    // Debt: being split (its selection and tests go to files of their own).
    ("report.rs", "to split"),
    (
        "stats/ministat.rs",
        "to split: its tests to stats/ministat/tests.rs",
    ),
    // Frame layouts and checksum vectors: tables, not logic.
    ("traffic/packet.rs", "packet tables"),
    // The hand-assembled XDP program is a table of BPF instructions.
    ("traffic/xdp.rs", "BPF instruction table"),
];

/// Functions allowed past 80 lines, and why.
const LONG_FNS: &[(&str, &str, &str)] = &[
    (
        "traffic/xdp.rs",
        "program",
        "the BPF program, one instruction a line",
    ),
    // Debt: written before the rule, to cut into steps.
    ("ingest/benchlab.rs", "read_dir", "to split"),
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

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let mut wrong = Vec::new();
    for (rel, text) in tree() {
        let own = top_module(&rel);
        if matches!(own, "lib" | "main") {
            continue;
        }
        let own_layer = layer(own).unwrap_or_else(|| panic!("{rel}: module `{own}` has no layer"));
        let code = code(&rel, &text);
        for (at, _) in code.match_indices("crate::") {
            let used: String = code[at + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
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

#[test]
fn no_source_file_over_500_lines() {
    let long: Vec<String> = tree()
        .into_iter()
        .filter(|(rel, _)| !LONG_FILES.iter().any(|(f, _)| f == rel))
        .filter(|(rel, text)| !rel.ends_with("/tests.rs") && text.lines().count() > 500)
        .map(|(rel, text)| format!("{rel}: {} lines", text.lines().count()))
        .collect();
    assert!(
        long.is_empty(),
        "files over 500 lines:\n{}",
        long.join("\n")
    );
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

#[test]
fn no_function_over_80_lines() {
    let mut long = Vec::new();
    for (rel, text) in tree() {
        for (name, n) in long_functions(&code(&rel, &text), 80) {
            if !LONG_FNS.iter().any(|(f, n, _)| *f == rel && *n == name) {
                long.push(format!("{rel}: fn {name}: {n} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over 80 lines:\n{}",
        long.join("\n")
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
