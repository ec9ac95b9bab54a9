//! The shipped presets and the preset format: every file loads, builds and runs; save → load
//! → save is byte-identical; broken files name file:line:col and what was expected and never
//! disturb a scene that is already running.

use std::path::Path;

use drape::preset::{Preset, PresetError};
use drape::sim::{Cloth, Collider, PinMode};
use glam::Vec3;

use crate::common::{
    all_finite, grid_of, load_preset, run, shipped_preset_names, shipped_presets, shipped_run, snapshot, SHIPPED_CHECKED_FRAMES,
};

#[test]
fn the_required_presets_are_shipped() {
    let files = shipped_presets();
    for name in ["default", "sphere_drape", "hammock", "silk", "cotton", "denim", "leather", "rubber"] {
        assert!(
            files.iter().any(|f| f.file_stem().unwrap() == name),
            "presets/{name}.ron is missing"
        );
    }
}

// The runs are shared (`shipped_run`): these 120 frames are the first of the 600 that
// self_collision.rs's every-preset test runs.
#[test]
fn every_shipped_preset_loads_builds_and_runs_120_frames() {
    for name in shipped_preset_names() {
        shipped_run(&name, SHIPPED_CHECKED_FRAMES, |run| {
            let (path, preset) = (&run.path, &run.preset);
            assert!(
                !preset.name.is_empty() && !preset.description.is_empty(),
                "{}: name and description",
                path.display()
            );
            // Modest resolutions keep every preset interactive, except the falling strip (Ten
            // Minute Physics 15's 30 × 200 scene reproduced as it is, about 27 ms a frame on
            // one core), mesh scenes of up to a 64² grid's particle count (the tablecloth) and
            // a material sheet as fine as its folds need and no finer (one column fewer would
            // be too coarse: docs/materials.md's rule).
            match preset.single_grid() {
                Some(grid) => {
                    let tmp15_strip = path.ends_with("falling_strip.ron") && (grid.columns, grid.rows) == (30, 200);
                    let modest = grid.columns <= 48 && grid.rows <= 48;
                    assert!(
                        tmp15_strip || modest || folds_need(&grid, &preset.material),
                        "{}: resolution",
                        path.display()
                    );
                }
                None => {
                    let particles = preset.build().map(|c| c.particles().len()).unwrap_or_else(|e| panic!("{e}"));
                    assert!(particles <= 64 * 64, "{}: {particles} particles", path.display());
                }
            }
            assert!(
                run.bad_stats.is_none(),
                "{} {}",
                path.display(),
                run.bad_stats.as_deref().unwrap_or("")
            );
            assert!(run.finite_when_checked, "{}: non-finite state", path.display());
            // Nothing fell through the ground.
            let ground = preset.colliders.iter().find_map(|c| match c {
                Collider::Ground { height, .. } => Some(*height),
                _ => None,
            });
            if let Some(height) = ground {
                let lowest = run.lowest_when_checked;
                assert!(
                    lowest >= height,
                    "{}: particle at {lowest} below the ground {height}",
                    path.display()
                );
            }
        });
    }
}

#[test]
fn every_shipped_preset_round_trips_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for path in shipped_presets() {
        let preset = Preset::load(&path).unwrap();
        let first = dir.path().join("first.ron");
        let second = dir.path().join("second.ron");
        preset.save(&first).unwrap();
        let reloaded = Preset::load(&first).unwrap();
        assert_eq!(reloaded, preset, "{}: save → load changed the preset", path.display());
        reloaded.save(&second).unwrap();
        assert_eq!(
            std::fs::read(&first).unwrap(),
            std::fs::read(&second).unwrap(),
            "{}: save → load → save is not byte-identical",
            path.display()
        );
        // Saving over an existing file replaces it and leaves no temporary file behind.
        preset.save(&first).unwrap();
    }
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["first.ron", "second.ron"]);
}

#[test]
fn an_empty_preset_is_all_defaults() {
    assert_eq!(Preset::parse("()", Path::new("empty.ron")).unwrap(), Preset::default());
}

#[test]
fn material_presets_are_ordered_like_real_fabrics() {
    let names = ["silk", "cotton", "leather", "denim", "rubber"];
    let materials: Vec<_> = names.iter().map(|n| (*n, load_preset(n).material)).collect();
    for pair in materials.windows(2) {
        let ((a, ma), (b, mb)) = (&pair[0], &pair[1]);
        assert!(ma.areal_density < mb.areal_density, "areal density: {a} should be lighter than {b}");
    }
    let bending = ["silk", "cotton", "denim", "rubber", "leather"];
    let rigidity: Vec<(&str, f32)> = bending.iter().map(|n| (*n, load_preset(n).material.bending_rigidity())).collect();
    for pair in rigidity.windows(2) {
        assert!(
            pair[0].1 < pair[1].1,
            "bending rigidity: {:?} should be below {:?}",
            pair[0],
            pair[1]
        );
    }
    for (name, m) in &materials {
        assert!(m.friction_kinetic <= m.friction_static, "{name}: μ_k ≤ μ_s");
        // Plausible fabric ranges: 20 g/m² to 2 kg/m², 1e-7 to 1e-2 N·m.
        assert!((0.02..2.0).contains(&m.areal_density), "{name}: density {}", m.areal_density);
        assert!((1e-7..1e-2).contains(&m.bending_rigidity()), "{name}: D {}", m.bending_rigidity());
    }
}

#[test]
fn sphere_drape_settles_on_the_sphere() {
    let preset = load_preset("sphere_drape");
    let Some(&Collider::Sphere { center, radius, .. }) = preset.colliders.iter().find(|c| matches!(c, Collider::Sphere { .. })) else {
        panic!("sphere_drape needs a sphere");
    };
    assert_eq!(grid_of(&preset).pins, PinMode::None);
    let mut cloth = preset.build().unwrap();
    run(&mut cloth, &preset.solver, &preset.material, 180);
    let middle = grid_of(&preset).index(grid_of(&preset).columns / 2, grid_of(&preset).rows / 2) as usize;
    let apex = cloth.particles().position(middle);
    let gap = apex.distance(center) - radius - preset.solver.collision_thickness;
    assert!(
        (-1e-4..0.01).contains(&gap),
        "the sheet's middle should rest on the sphere, gap {gap} m"
    );
}

#[test]
fn hammock_sags_between_its_pinned_edges() {
    let preset = load_preset("hammock");
    let mut cloth = preset.build().unwrap();
    let pinned_y = grid_of(&preset).origin.y;
    let before = snapshot(&cloth);
    run(&mut cloth, &preset.solver, &preset.material, 240);
    let spec = &grid_of(&preset);
    let middle = cloth.particles().position(spec.index(spec.columns / 2, spec.rows / 2) as usize);
    assert!(middle.y < pinned_y - 0.05, "the middle should sag, it is at {}", middle.y);
    for i in 0..cloth.particles().len() {
        if cloth.particles().is_pinned(i) {
            assert_eq!(cloth.particles().position(i), before.positions[i], "pinned particle {i} moved");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Broken presets
// ---------------------------------------------------------------------------------------

/// A valid preset text with `line` substituted into its cloth block.
fn preset_with_cloth_line(line: &str) -> String {
    format!(
        "// a preset with one bad line\n(\n    version: 1,\n    cloth: (\n        width: 1.0,\n        {line}\n        rows: 10,\n    ),\n    material: (\n        thickness: 0.0005,\n    ),\n)\n"
    )
}

fn preset_with_material_line(line: &str) -> String {
    format!("(\n    name: \"broken\",\n    material: (\n        thickness: 0.0005,\n        {line}\n    ),\n)\n")
}

/// A broken text, the token the error must point at, and words its message must contain.
struct Broken {
    what: &'static str,
    text: String,
    token: &'static str,
    expected: &'static [&'static str],
}

fn broken_presets() -> Vec<Broken> {
    vec![
        Broken {
            what: "syntax error (missing comma)",
            text: preset_with_cloth_line("columns: 10\n        height: 2.0,"),
            token: "height",
            expected: &["Expected comma"],
        },
        Broken {
            what: "syntax error (unclosed string)",
            text: "(\n    name: \"unfinished,\n)\n".into(),
            token: "\"unfinished",
            expected: &["string"],
        },
        Broken {
            what: "unknown field",
            text: preset_with_cloth_line("colour: 3,"),
            token: "colour",
            expected: &["colour", "columns"],
        },
        Broken {
            what: "wrong type",
            text: preset_with_cloth_line("columns: \"forty\","),
            token: "\"forty\"",
            expected: &["integer"],
        },
        Broken {
            what: "negative modulus",
            text: preset_with_material_line("youngs_modulus: -5000000.0,"),
            token: "youngs_modulus",
            expected: &["youngs_modulus", "-5e6", "[1e3, 1e12] Pa"],
        },
    ]
}

/// 1-based line and column range of `token`'s first occurrence.
fn token_span(text: &str, token: &str) -> (usize, usize, usize) {
    for (i, line) in text.lines().enumerate() {
        if let Some(col) = line.find(token) {
            return (i + 1, col + 1, col + token.len() + 1);
        }
    }
    panic!("token {token} not in text");
}

fn assert_points_at(case: &Broken, error: &PresetError, path: &Path) {
    let PresetError::Invalid {
        path: p,
        line,
        col,
        message,
    } = error
    else {
        panic!("{}: expected PresetError::Invalid, got {error:?}", case.what);
    };
    assert_eq!(p, path, "{}", case.what);
    let (expected_line, first, last) = token_span(&case.text, case.token);
    assert_eq!(*line, expected_line, "{}: line of {error}", case.what);
    assert!(
        (first..=last).contains(col),
        "{}: column {col} outside {first}..={last} of `{}`: {error}",
        case.what,
        case.token
    );
    for word in case.expected {
        assert!(message.contains(word), "{}: message should mention `{word}`: {message}", case.what);
    }
    let shown = error.to_string();
    assert!(
        shown.starts_with(&format!("{}:{line}:{col}: ", path.display())),
        "{}: display {shown}",
        case.what
    );
}

#[test]
fn broken_presets_name_file_line_column_and_what_was_expected() {
    for case in broken_presets() {
        let path = Path::new("presets/broken.ron");
        let error = Preset::parse(&case.text, path).expect_err(case.what);
        assert_points_at(&case, &error, path);
    }
}

#[test]
fn an_invalid_value_is_located_at_its_own_field() {
    // `thickness` also ends `collision_thickness`, which comes first here, and a comment
    // mentions it: the error must still point at the material's thickness.
    let text = "(\n    // thickness: the sheet's, in m\n    solver: (\n        collision_thickness: 0.01,\n    ),\n    material: (\n        thickness: -0.001,\n    ),\n)\n";
    let error = Preset::parse(text, Path::new("order.ron")).unwrap_err();
    let PresetError::Invalid { line, col, message, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!((*line, *col), (7, 9), "{error}");
    assert!(message.contains("thickness") && message.contains("[1e-5, 0.05] m"), "{error}");
}

#[test]
fn loading_a_broken_file_leaves_the_running_scene_untouched() {
    let mut current = load_preset("default");
    let mut cloth: Cloth = current.build().unwrap();
    run(&mut cloth, &current.solver, &current.material, 30);
    let before = snapshot(&cloth);
    let kept = current.clone();
    let dir = tempfile::tempdir().unwrap();
    for case in broken_presets() {
        let path = dir.path().join("broken.ron");
        std::fs::write(&path, &case.text).unwrap();
        // The app's load path: replace the scene only when the new preset loads and builds.
        match Preset::load(&path) {
            Ok(preset) => {
                cloth = preset.build().unwrap();
                current = preset;
            }
            Err(error) => assert_points_at(&case, &error, &path),
        }
        assert_eq!(current, kept, "{}", case.what);
        assert_eq!(snapshot(&cloth), before, "{}", case.what);
    }
    // The kept scene carries on.
    run(&mut cloth, &current.solver, &current.material, 10);
    assert!(all_finite(&cloth));
}

#[test]
fn a_missing_file_is_an_io_error_naming_the_path() {
    let path = Path::new("presets/does-not-exist.ron");
    let error = Preset::load(path).unwrap_err();
    assert!(matches!(error, PresetError::Io { .. }), "{error:?}");
    assert!(error.to_string().starts_with("presets/does-not-exist.ron: "), "{error}");
}

#[test]
fn newer_versions_and_invalid_colliders_are_refused() {
    let newer = "(\n    version: 99,\n)\n";
    let error = Preset::parse(newer, Path::new("new.ron")).unwrap_err();
    assert!(matches!(error, PresetError::Invalid { line: 2, .. }), "{error}");
    let sphere = "(\n    colliders: [\n        Sphere(center: (0.0, 1.0, 0.0), radius: -0.5),\n    ],\n)\n";
    let error = Preset::parse(sphere, Path::new("sphere.ron")).unwrap_err();
    let PresetError::Invalid { message, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(message.contains("radius"), "{error}");
}

/// Issue 31: `pinned_at` starts a grid particle pinned where it says, at rest, whatever `pins`
/// says; the rest shape stays the grid's; the field writes and reads back; bad entries are
/// refused naming the cell.
#[test]
fn pinned_at_starts_a_particle_pinned_where_it_says() {
    let preset_with = |entries: &str| {
        format!("(\n    cloth: (\n        columns: 4,\n        rows: 3,\n        pins: None,\n        pinned_at: [{entries}],\n    ),\n)\n")
    };
    let held = Vec3::new(0.3, 2.5, -0.2);
    let text = preset_with("(column: 1, row: 2, position: (0.3, 2.5, -0.2))");
    let preset = Preset::parse(&text, Path::new("held.ron")).unwrap();
    let cloth = preset.build().unwrap();
    let i = 2 * 4 + 1;
    assert_eq!(cloth.pinned_count(), 1);
    assert!(cloth.particles().is_pinned(i));
    assert_eq!(cloth.particles().position(i), held);
    assert_eq!(cloth.particles().velocity(i), Vec3::ZERO);
    let grid = grid_of(&preset);
    assert_eq!(cloth.model().positions[i], grid.position(1, 2), "the rest shape is the grid's");
    assert_eq!(
        cloth.particles().position(i + 1),
        grid.position(2, 2),
        "its neighbours start at rest"
    );
    let again = Preset::parse(&preset.to_ron(), Path::new("again.ron")).unwrap();
    assert_eq!(grid_of(&again).pinned_at, grid.pinned_at);

    let world = "must be finite, components in [-10000, 10000] m";
    for (entries, expected) in [
        (
            "(column: 4, row: 0, position: (0.0, 2.0, 0.0))",
            "pinned_at (4, 0) lies outside the 4 × 3 grid".to_string(),
        ),
        (
            "(column: 0, row: 1, position: (0.0, 2.0, 0.0)), (column: 0, row: 1, position: (0.0, 2.1, 0.0))",
            "pinned_at lists (0, 1) twice".to_string(),
        ),
        (
            "(column: 0, row: 0, position: (0.0, 20000.0, 0.0))",
            format!("pinned_at (0, 0): position (0, 20000, 0) {world}"),
        ),
        (
            "(column: 0, row: 0, position: (0.0, NaN, 0.0))",
            format!("pinned_at (0, 0): position (0, NaN, 0) {world}"),
        ),
    ] {
        let error = Preset::parse(&preset_with(entries), Path::new("bad.ron")).unwrap_err();
        assert!(error.to_string().contains(&expected), "{entries}: {error}");
    }
}

/// Whether `grid` is the coarsest square grid whose spacing resolves `material`'s folds
/// (`drape::calibrate::FoldResolution`): it does, and one column fewer would not.
fn folds_need(grid: &drape::sim::GridSpec, material: &drape::sim::Material) -> bool {
    use drape::calibrate::FoldResolution;
    let resolution = |columns: u32| {
        let spacing = grid.width / (columns - 1) as f32;
        FoldResolution::new(spacing, material, 9.81).resolves_folds()
    };
    grid.columns == grid.rows && grid.width == grid.height && resolution(grid.columns) && !resolution(grid.columns - 1)
}
