//! Issue 35 item 4: the one table of parameters (`drape::sim::param_table`) against what is
//! made from it. Validation accepts exactly each row's range (its ends in, just beyond them
//! out, with the row's name), every default lies inside its accepted range and on its slider's
//! rail, every rail lies inside the accepted range, and docs/presets.md's Material and Solver
//! tables are the table's own rendering (and its Grid table holds the grid's rows). (The panels' side is tested in the app:
//! `the_panels_show_every_parameter_of_the_table_once`, `counts_move_in_fine_steps_near_their_defaults`.)

use std::path::Path;

use drape::sim::param_table::{self, Bounds, FieldMut, Param, Scale, Value};
use drape::sim::{GridSpec, Material, SimError, SolverParams};

/// `target` with the row's field set to `x` (each component of a vector; a count rounded).
fn with<T: Default>(param: &Param<T>, x: f64) -> T {
    let mut target = T::default();
    match (param.access.write)(&mut target) {
        FieldMut::Real(v) => *v = x as f32,
        FieldMut::OptionalReal(v) => *v = Some(x as f32),
        FieldMut::Count(v) => *v = x as u32,
        FieldMut::Vector(v) => *v = glam::Vec3::splat(x as f32),
        FieldMut::Toggle(_) => unreachable!("toggles have no range"),
    }
    target
}

/// The name of the parameter `result` refuses, if it refuses one.
fn refused(result: Result<(), SimError>) -> Option<&'static str> {
    match result {
        Err(SimError::InvalidParameter { name, .. }) => Some(name),
        _ => None,
    }
}

/// The checks of one table, with `validate` the struct's own validation.
fn check_table<T: Default>(table: &[Param<T>], validate: fn(&T) -> Result<(), SimError>) -> Vec<String> {
    let mut problems = Vec::new();
    for param in table {
        let key = param.key;
        if matches!(param.default_value(), Value::Toggle(_)) {
            continue;
        }
        let Bounds { min, max } = param.accepted;
        for inside in [min, max] {
            if let Some(name) = refused(validate(&with(param, inside))) {
                problems.push(format!("{key} = {inside} (an end of its range) refused as {name}"));
            }
        }
        let is_count = matches!(param.default_value(), Value::Count(_));
        let margin = |end: f64| if end == 0.0 { 1e-6 } else { end.abs() * 1e-6 };
        let beyond = if is_count {
            [(min > 0.0).then_some(min - 1.0), Some(max + 1.0)]
        } else {
            [Some(min - margin(min)), Some(max + margin(max))]
        };
        for outside in beyond.into_iter().flatten() {
            if refused(validate(&with(param, outside))) != Some(key) {
                problems.push(format!("{key} = {outside} (outside [{min}, {max}]) not refused as {key}"));
            }
        }
        if !is_count && refused(validate(&with(param, f64::NAN))) != Some(key) {
            problems.push(format!("{key} = NaN not refused"));
        }
        if !(param.accepted.contains(param.slider.min) && param.accepted.contains(param.slider.max)) {
            problems.push(format!("{key}: the slider's rail {:?} leaves the accepted range", param.slider));
        }
        if param.scale == Scale::Logarithmic && param.slider.min <= 0.0 {
            problems.push(format!("{key}: a logarithmic rail must start above 0"));
        }
        let defaults = match param.default_value() {
            Value::Real(v) | Value::OptionalReal(Some(v)) => vec![v as f64],
            Value::Count(n) => vec![n as f64],
            Value::Vector(v) => v.to_array().map(f64::from).to_vec(),
            _ => Vec::new(),
        };
        for default in defaults {
            if !param.accepted.contains(default) || !param.slider.contains(default) {
                problems.push(format!("{key}: default {default} off its rail {:?} or range", param.slider));
            }
        }
    }
    if let Err(e) = validate(&T::default()) {
        problems.push(format!("the defaults are refused: {e}"));
    }
    problems
}

#[test]
fn validation_accepts_exactly_the_ranges_of_the_table() {
    let mut problems = check_table(param_table::SOLVER, SolverParams::validate);
    problems.extend(check_table(param_table::MATERIAL, Material::validate));
    problems.extend(check_table(param_table::GRID, GridSpec::validate));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check catches a range the validation does not share: a table row whose accepted range
/// is wider than what its field allows is caught at its new end.
#[test]
fn the_range_check_catches_a_disagreement() {
    let substeps = param_table::find(param_table::SOLVER, "substeps").unwrap();
    // What a second, stale validation (substeps up to 100, as the old slider had) would do.
    let stale: fn(&SolverParams) -> Result<(), SimError> = |p| {
        if p.substeps > 100 {
            return Err(SimError::InvalidParameter {
                name: "substeps",
                value: p.substeps as f64,
                expected: "1 to 100 substeps".into(),
            });
        }
        p.validate()
    };
    let problems = check_table(std::slice::from_ref(substeps), stale);
    assert!(problems.iter().any(|p| p.starts_with("substeps = 1000")), "{problems:?}");
}

/// docs/presets.md's table under `heading`, from its header line to the first line after it
/// that is not a table row.
fn documented_table<'d>(doc: &'d str, heading: &str) -> Vec<&'d str> {
    doc.lines()
        .skip_while(|line| *line != heading)
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .collect()
}

#[test]
fn the_reference_tables_are_the_parameter_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/presets.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    for (heading, generated) in [
        ("## Material", param_table::markdown_table(param_table::MATERIAL)),
        ("## Solver", param_table::markdown_table(param_table::SOLVER)),
    ] {
        let documented = documented_table(&doc, heading);
        let expected: Vec<&str> = generated.lines().collect();
        assert!(
            documented == expected,
            "docs/presets.md's table under `{heading}` is not the parameter table's; replace it with:\n\n{generated}"
        );
    }
    // The grid's table also has rows for its pins, orientation and switches: each numeric row
    // is the table's.
    let heading = "## Grid: `cloth` and `Grid(…)` objects";
    let documented = documented_table(&doc, heading);
    let missing: Vec<String> = param_table::GRID
        .iter()
        .map(|param| param.markdown_row())
        .filter(|row| !documented.contains(&row.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/presets.md's Grid table lacks the parameter table's rows:\n{}",
        missing.join("\n")
    );
}
