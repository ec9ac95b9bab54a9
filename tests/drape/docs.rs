//! The documents against the code: docs/presets.md documents exactly the fields and values the
//! preset format has, the examples in it and in the README load and run, the README names
//! every command and flag of the binary, stays a manual of at most 300 lines and gives the
//! test command `.ci/run` runs.
//!
//! The format's field names are taken from the loader itself: a preset with an unknown field
//! (or value) in a section is refused with the section's known fields (or values), which is
//! serde's list of the struct's (or enum's) names, so a field added to the code is missed by
//! the reference until it has a row there.

use std::path::{Path, PathBuf};
use std::process::Command;

use drape::preset::Preset;
use drape::sim::MeshPins;
use glam::Vec3;

const README_MAX_LINES: usize = 300;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The names the loader lists when `probe` puts an unknown field or value into one section.
fn known_names(probe: &str) -> Vec<String> {
    let error = match Preset::parse(probe, Path::new("probe.ron")) {
        Ok(_) => panic!("the probe {probe:?} was accepted"),
        Err(e) => e.to_string(),
    };
    let list = ["known fields: ", "expected one of: "]
        .iter()
        .find_map(|marker| error.split_once(marker).map(|(_, list)| list))
        .unwrap_or_else(|| panic!("the probe {probe:?} gave no list of names: {error}"));
    list.split(", ").map(|name| name.trim().to_string()).collect()
}

/// The field names of a value as RON writes them (`name:` keys).
fn serialized_field_names(value: &impl serde::Serialize) -> Vec<String> {
    let text = ron::to_string(value).expect("serialisable");
    let mut names = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if c == ':' && !word.is_empty() && !word.starts_with(|d: char| d.is_ascii_digit()) {
            names.push(word.clone());
        }
        word.clear();
    }
    names
}

/// The names of the table rows (`| `name` | …`) directly under `heading` in `doc`: up to the
/// next heading of any level, so a subsection's rows belong to the subsection.
fn documented_names(doc: &str, heading: &str) -> Vec<String> {
    let mut lines = doc.lines().skip_while(|line| *line != heading);
    assert!(lines.next().is_some(), "docs/presets.md has no heading `{heading}`");
    lines
        .take_while(|line| !line.starts_with('#'))
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`').map(|(name, _)| name.to_string()))
        .collect()
}

/// Every section of the format: a probe that makes the loader list its names, and the heading
/// of docs/presets.md whose table documents them.
const SECTIONS: &[(&str, &str)] = &[
    ("(zzz: 0)", "## Top level"),
    ("(objects: [Zzz(a: 0)])", "### Objects"),
    ("(cloth: (zzz: 0))", "## Grid: `cloth` and `Grid(…)` objects"),
    ("(objects: [Grid(zzz: 0)])", "## Grid: `cloth` and `Grid(…)` objects"),
    ("(cloth: (orientation: Zzz))", "### Orientation"),
    ("(cloth: (pins: Zzz))", "### Grid pins"),
    ("(cloth: (pinned_at: [(zzz: 0)]))", "### Pinned positions"),
    ("(objects: [Mesh(zzz: 0)])", "## Mesh objects"),
    ("(objects: [Mesh(pins: Zzz)])", "### Mesh pins"),
    ("(material: (zzz: 0))", "## Material"),
    ("(objects: [Grid(material: (zzz: 0))])", "## Material"),
    ("(solver: (zzz: 0))", "## Solver"),
    ("(colliders: [Zzz(a: 0)])", "## Colliders"),
    ("(colliders: [Ground(zzz: 0)])", "### `Ground`"),
    ("(colliders: [Sphere(zzz: 0)])", "### `Sphere`"),
    ("(colliders: [Capsule(zzz: 0)])", "### `Capsule`"),
    ("(colliders: [Box(zzz: 0)])", "### `Box`"),
    (
        "(colliders: [Ground(height: 0, motion: Zzz(a: 0))])",
        "### `motion`: scripted paths",
    ),
    ("(colliders: [Ground(height: 0, motion: Linear(zzz: 0))])", "#### `Linear`"),
    ("(colliders: [Ground(height: 0, motion: Oscillate(zzz: 0))])", "#### `Oscillate`"),
    ("(appearance: (zzz: 0))", "## Appearance"),
    ("(objects: [Mesh(appearance: (zzz: 0))])", "## Appearance"),
];

/// Differences between the names the code has and those a table documents.
fn mismatch(heading: &str, known: &[String], documented: &[String]) -> Option<String> {
    let missing: Vec<&String> = known.iter().filter(|name| !documented.contains(name)).collect();
    let stale: Vec<&String> = documented.iter().filter(|name| !known.contains(name)).collect();
    (!missing.is_empty() || !stale.is_empty())
        .then(|| format!("under `{heading}`: missing {missing:?}, documented but not in the format {stale:?} (the format has {known:?})"))
}

/// The check of [`every_preset_field_and_value_has_a_row_in_docs_presets_md`] on `doc`.
fn preset_reference_problems(doc: &str) -> Vec<String> {
    let mut problems: Vec<String> = SECTIONS
        .iter()
        .filter_map(|(probe, heading)| mismatch(heading, &known_names(probe), &documented_names(doc, heading)))
        .collect();
    // `Box(min, max)` pins: MeshPins is not `deny_unknown_fields`, so its names come from
    // writing one out.
    let pin_box = MeshPins::Box {
        min: Vec3::ZERO,
        max: Vec3::ONE,
    };
    let heading = "#### The fields of `Box`";
    problems.extend(mismatch(
        heading,
        &serialized_field_names(&pin_box),
        &documented_names(doc, heading),
    ));
    problems
}

#[test]
fn every_preset_field_and_value_has_a_row_in_docs_presets_md() {
    let doc = read("docs/presets.md");
    let problems = preset_reference_problems(&doc);
    assert!(
        problems.is_empty(),
        "docs/presets.md is out of step with the format:\n{}",
        problems.join("\n")
    );
}

/// The check above can fail: a reference that lost one field's row, or gained a row for a
/// field the format does not have, is caught.
#[test]
fn the_reference_check_catches_a_missing_or_a_stale_row() {
    let doc = read("docs/presets.md");
    let row = doc
        .lines()
        .find(|line| line.starts_with("| `tear_response_time` |"))
        .expect("the material table has a row for tear_response_time");
    let without = doc.replace(&format!("{row}\n"), "");
    let problems = preset_reference_problems(&without);
    assert!(!problems.is_empty(), "a missing row went unnoticed");
    assert!(
        problems
            .iter()
            .all(|p| p.contains("## Material") && p.contains("tear_response_time")),
        "{problems:?}"
    );
    let renamed = doc.replace(row, &row.replace("tear_response_time", "tear_reaction_time"));
    let problems = preset_reference_problems(&renamed);
    assert!(problems.iter().any(|p| p.contains("tear_reaction_time")), "{problems:?}");
}

#[test]
fn every_shipped_preset_is_listed_in_docs_presets_md() {
    let doc = read("docs/presets.md");
    let section: String = doc
        .lines()
        .skip_while(|line| *line != "## The shipped presets")
        .skip(1)
        .take_while(|line| !line.starts_with("## "))
        .collect::<Vec<_>>()
        .join("\n");
    let mut presets: Vec<PathBuf> = std::fs::read_dir(crate::common::presets_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "ron"))
        .collect();
    presets.sort();
    assert!(!presets.is_empty());
    for path in presets {
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(
            section.contains(&format!("`{name}`")),
            "{name} is missing from docs/presets.md's shipped presets"
        );
    }
}

/// The ```ron blocks of a Markdown text.
fn ron_blocks(markdown: &str) -> Vec<String> {
    markdown
        .split("```ron\n")
        .skip(1)
        .map(|rest| rest.split_once("```").expect("a closed code block").0.to_string())
        .collect()
}

/// Every `ron` example of the README and the preset reference loads, builds and runs five
/// frames with finite results (relative paths resolve from the project's root).
#[test]
fn the_preset_examples_load_and_run() {
    for file in ["README.md", "docs/presets.md"] {
        let blocks = ron_blocks(&read(file));
        assert!(!blocks.is_empty(), "{file} has no ```ron example");
        for (k, text) in blocks.iter().enumerate() {
            let preset = Preset::parse(text, Path::new(file)).unwrap_or_else(|e| panic!("{file}, example {k}: {e}"));
            let mut cloth = preset.build().unwrap_or_else(|e| panic!("{file}, example {k}: {e}"));
            let summary = drape::headless::simulate(&mut cloth, &preset.solver, &preset.material, 5)
                .unwrap_or_else(|e| panic!("{file}, example {k}: {e}"));
            assert!(
                summary.kinetic_energy.is_finite() && summary.max_strain.is_finite(),
                "{file}, example {k}"
            );
        }
    }
}

#[test]
fn the_readme_is_a_manual_of_at_most_300_lines_with_the_ci_test_command() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines (at most {README_MAX_LINES})"
    );
    let ci = read(".ci/run");
    assert!(
        ci.lines().any(|line| line.trim() == "cargo test --release"),
        ".ci/run no longer runs `cargo test --release`"
    );
    assert!(
        readme.contains("`cargo test --release`"),
        "README.md does not give the test command .ci/run runs"
    );
    assert!(
        readme.contains("`cargo run --release`"),
        "README.md does not give the command that opens the sandbox"
    );
}

/// `drape [SUBCOMMAND] --help`'s text.
fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(args)
        .arg("--help")
        .output()
        .expect("the drape binary runs");
    assert!(output.status.success(), "drape {args:?} --help failed");
    String::from_utf8(output.stdout).unwrap()
}

/// The `--flags` a help text shows.
fn long_flags(help: &str) -> Vec<String> {
    let mut flags: Vec<String> = help
        .split_whitespace()
        .filter(|word| word.starts_with("--"))
        .map(|word| word.trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '-')).to_string())
        .filter(|flag| flag != "--help" && flag != "--version")
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

#[test]
fn the_readme_names_every_command_and_flag_of_the_binary() {
    let readme = read("README.md");
    let top = help(&[]);
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|command| *command != "help")
        .collect();
    assert!(commands.contains(&"simulate"), "no commands found in {top}");
    let synopsis = readme.lines().find(|line| line.starts_with("drape [")).unwrap_or_default();
    let mut missing: Vec<String> = long_flags(&top)
        .into_iter()
        .filter(|flag| !synopsis.contains(flag.as_str()))
        .map(|flag| format!("drape {flag}"))
        .collect();
    for command in commands {
        if !readme.contains(&format!("drape {command}")) {
            missing.push(format!("drape {command}"));
        }
        for flag in long_flags(&help(&[command])) {
            if !readme.contains(&flag) {
                missing.push(format!("drape {command} {flag}"));
            }
        }
    }
    assert!(missing.is_empty(), "README.md does not mention {missing:?}");
}
