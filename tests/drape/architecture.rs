//! Issue 30's layout rules, checked on the source tree: no engine file over 1 000 lines, and
//! no engine module importing the re-exports of `src/sim/mod.rs` (those are for the library's
//! users; inside the engine a name is imported from the module that defines it, so the
//! module graph stays readable and free of circles through `sim`).

use std::path::{Path, PathBuf};

/// Most lines an engine source file may have.
const MAX_LINES: usize = 1000;

fn engine_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/sim is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 20, "found the engine's files: {files:?}");
    files
}

#[test]
fn no_engine_file_is_over_a_thousand_lines() {
    let long: Vec<String> = engine_files()
        .into_iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(long.is_empty(), "engine files over {MAX_LINES} lines: {long:?}");
}

/// The names `src/sim/mod.rs` re-exports (`pub use module::{A, B};`).
fn reexported_names(sim_mod: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in sim_mod.lines().filter(|l| l.starts_with("pub use ")) {
        let list = line.trim_start_matches("pub use ").trim_end_matches(';');
        let list = list.split_once("::").map_or(list, |(_, rest)| rest);
        let list = list.trim_start_matches('{').trim_end_matches('}');
        for item in list.split(',') {
            // `A as B` re-exports B.
            let name = item.split(" as ").last().unwrap_or(item).trim();
            if !name.is_empty() {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// The names a `use` line takes from the crate's `sim` module itself, or (at the top level of
/// a file directly under src/sim, where `super` is `sim`; an indented line sits in a nested
/// module such as `mod tests`) from `super`: `crate::sim::{A, b::C}` gives A.
fn names_taken_from_sim(line: &str, directly_under_sim: bool) -> Vec<String> {
    let top_level = !line.starts_with(char::is_whitespace);
    let line = line.trim();
    let prefixes: &[&str] = if directly_under_sim && top_level {
        &["use crate::sim::", "use super::"]
    } else {
        &["use crate::sim::"]
    };
    let Some(rest) = prefixes.iter().find_map(|p| line.strip_prefix(p)) else {
        return Vec::new();
    };
    let rest = rest.trim_end_matches(';');
    let items = match rest.strip_prefix('{') {
        Some(list) => list.trim_end_matches('}').split(',').map(str::trim).collect(),
        None => vec![rest],
    };
    items
        .into_iter()
        .filter(|item| !item.contains("::"))
        .map(|item| item.split(" as ").next().unwrap_or(item).trim().to_string())
        .filter(|name| !name.is_empty())
        .collect()
}

#[test]
fn the_engine_imports_from_defining_modules_not_from_the_sim_reexports() {
    let sim_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let reexported = reexported_names(&std::fs::read_to_string(sim_dir.join("mod.rs")).unwrap());
    assert!(reexported.iter().any(|n| n == "Cloth") && reexported.iter().any(|n| n == "MAX_THREADS"));
    let mut offences = Vec::new();
    for path in engine_files() {
        if path == sim_dir.join("mod.rs") {
            continue;
        }
        let directly_under_sim = path.parent() == Some(sim_dir.as_path());
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            for name in names_taken_from_sim(line, directly_under_sim) {
                if reexported.contains(&name) {
                    offences.push(format!("{}:{}: {name}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "imports of sim/mod.rs re-exports inside the engine: {offences:#?}"
    );
}

#[test]
fn the_import_check_recognises_a_reexport_import() {
    let names = reexported_names("pub use cloth::{Cloth, MAX_THROW_SPEED};\npub use constraints::MAX_PARTS as MAX_THREADS;");
    assert_eq!(names, ["Cloth", "MAX_THROW_SPEED", "MAX_THREADS"]);
    assert_eq!(names_taken_from_sim("use crate::sim::{Cloth, model::Model};", false), ["Cloth"]);
    assert_eq!(names_taken_from_sim("use super::MAX_THREADS;", true), ["MAX_THREADS"]);
    // In a nested module of a file under src/sim, `super` is that file's module.
    assert!(names_taken_from_sim("    use super::EdgeKind;", true).is_empty());
    assert!(names_taken_from_sim("use super::Batch;", false).is_empty());
}
