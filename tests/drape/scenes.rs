//! Issue 18's scenes beyond one rectangle: OBJ meshes (loading, polygons, errors at
//! file:line), version-1 presets running exactly as before, version-2 presets with several
//! objects round-tripping byte for byte, a mesh numbered any way giving the same physics,
//! mesh pins, and two cloths dropped on a ball coming to rest without passing through each
//! other.

use std::path::Path;

use drape::mesh_file::{load_obj, parse_obj, MeshFileError};
use drape::preset::{Appearance, Preset};
use drape::scene::{build_scene_model, MeshFiles, MeshSpec, SceneObject};
use drape::sim::{Cloth, GridSpec, Material, MeshPins};
use glam::Vec3;

use crate::common::{grid_of, intersecting_pairs, load_preset, run, shipped_run, SHIPPED_FRAMES};

/// A unit square as one quad (a polygon tobj splits into two triangles), with UVs.
const QUAD: &str = "# a square\nv 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nf 1/1 4/4 3/3 2/2\n";

fn parse(text: &str) -> Result<drape::sim::TriangleMesh, MeshFileError> {
    parse_obj(text, Path::new("cloth.obj"))
}

/// The line an error points at (`cloth.obj:LINE: ...`).
fn error_line(text: &str) -> (usize, String) {
    match parse(text) {
        Err(MeshFileError::Invalid { line, message, .. }) => (line, message),
        other => panic!("expected an invalid-file error, got {other:?}"),
    }
}

#[test]
fn a_quad_is_read_as_two_triangles_with_their_texture_coordinates() {
    let mesh = parse(QUAD).unwrap();
    assert_eq!(mesh.positions.len(), 4);
    assert_eq!(mesh.positions[2], Vec3::new(1.0, 0.0, 1.0), "vertices keep the file's order");
    assert_eq!(mesh.triangles, vec![[0, 3, 2], [0, 2, 1]], "a fan from the first corner");
    assert_eq!(mesh.corner_uvs.len(), 2);
    assert_eq!(mesh.corner_uvs[0][1], glam::Vec2::new(0.0, 1.0));
}

#[test]
fn a_pentagon_becomes_a_fan_of_three_triangles() {
    let text = "v 0 0 0\nv 1 0 0\nv 1.5 0 1\nv 0.5 0 1.8\nv -0.5 0 1\nf 1 5 4 3 2\n";
    let mesh = parse(text).unwrap();
    assert_eq!(mesh.triangles, vec![[0, 4, 3], [0, 3, 2], [0, 2, 1]]);
    assert!(mesh.corner_uvs.is_empty(), "no `vt`, no texture coordinates");
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let error = load_obj(Path::new("assets/no-such-mesh.obj")).unwrap_err();
    assert!(matches!(error, MeshFileError::Io { .. }));
    assert!(error.to_string().starts_with("assets/no-such-mesh.obj: "), "{error}");
}

#[test]
fn broken_lines_are_reported_with_their_line_number() {
    // A coordinate that is not a number (tobj's error, located by the loader).
    assert_eq!(error_line("v 0 0 0\nv 1 0 0\nv 1 zero 1\nf 1 2 3\n").0, 3);
    // A face index past the last vertex.
    assert_eq!(error_line("v 0 0 0\nv 1 0 0\nv 1 0 1\nf 1 2 3\nf 1 3 9\n").0, 5);
    // A face with a malformed corner.
    assert_eq!(error_line("v 0 0 0\nv 1 0 0\nv 1 0 1\n\nf 1 2 x\n").0, 5);
}

#[test]
fn defective_meshes_are_refused_at_the_offending_line() {
    let square = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nv 0 1 0\n";
    // Collinear corners.
    let (line, message) = error_line("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n");
    assert_eq!(line, 4, "{message}");
    assert!(message.contains("no area"), "{message}");
    // Three faces on one edge (1–3): the third is blamed.
    let (line, message) = error_line(&format!("{square}f 1 2 3\nf 1 3 4\nf 1 3 5\n"));
    assert_eq!(line, 8, "{message}");
    assert!(message.contains("not a surface"), "{message}");
    // Two faces winding their shared edge the same way.
    let (line, message) = error_line("v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nf 1 2 3\nf 1 4 3\n");
    assert_eq!(line, 6, "{message}");
    assert!(message.contains("same way"), "{message}");
    // A vertex no face uses would be a particle without mass.
    let (line, message) = error_line(&format!("{square}f 1 2 3\nf 1 3 4\n"));
    assert_eq!(line, 5, "{message}");
    assert!(message.contains("used by no face"), "{message}");
}

#[test]
fn the_shipped_meshes_load_and_the_sphere_is_closed() {
    let expected = [
        ("tablecloth", 3997),
        ("skirt", 64 * 24),
        ("sphere", 642),
        ("pillow", 24 * 24 + 22 * 22),
        // Colliders: a round table (a top of 2 × 249 vertices, four 8-vertex legs), a paddle.
        ("table", 2 * 249 + 4 * 8),
        ("paddle", 2 * 25 * 17),
        // A dress form: a torso of 78 rings of 56 vertices and two centre vertices, a pole of
        // 2 × 17 vertices and a base disc of 2 × 177.
        ("dress_form", 78 * 56 + 2 + 2 * 17 + 2 * 177),
    ];
    for (name, vertices) in expected {
        let mesh = load_obj(Path::new(&format!("assets/{name}.obj"))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mesh.positions.len(), vertices, "{name}");
        assert_eq!(mesh.corner_uvs.len(), mesh.triangles.len(), "{name} has texture coordinates");
    }
    // A closed surface of genus 0: V − E + F = 2, every edge in two triangles.
    let sphere = load_obj(Path::new("assets/sphere.obj")).unwrap();
    let mut edges: Vec<(u32, u32)> = sphere
        .triangles
        .iter()
        .flat_map(|t| (0..3).map(move |k| (t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3]))))
        .collect();
    edges.sort_unstable();
    let with_two = edges.chunk_by(|a, b| a == b).filter(|run| run.len() == 2).count();
    edges.dedup();
    assert_eq!(with_two, edges.len(), "every edge of the sphere is shared by two triangles");
    assert_eq!(
        sphere.positions.len() as i64 - edges.len() as i64 + sphere.triangles.len() as i64,
        2
    );
}

#[test]
fn a_mesh_carries_the_mass_of_its_area() {
    let spec = MeshSpec {
        file: "assets/tablecloth.obj".into(),
        ..MeshSpec::default()
    };
    let model = spec.build(MeshFiles::default()).unwrap();
    // Summed in f64: 3 997 f32 additions would lose more than the tolerance below.
    let area: f64 = model.lumped_area.iter().map(|&a| a as f64).sum();
    // The disc's rim is the regular 216-gon inscribed in the circle of radius 0.75 m (ring 36
    // has 6 · 36 vertices), and its flat triangles tile it exactly: area (n/2) r² sin(2π/n).
    let n = 216.0f64;
    let polygon = n / 2.0 * 0.75f64.powi(2) * (2.0 * std::f64::consts::PI / n).sin();
    assert!(
        ((area - polygon) / polygon).abs() < 1e-5,
        "area {area} against the 216-gon's {polygon}"
    );
    assert_eq!(model.pinned.iter().filter(|&&p| p).count(), 0);
}

#[test]
fn mesh_pins_select_by_height_box_and_vertex_number() {
    let build = |pins: MeshPins| {
        let spec = MeshSpec {
            file: "assets/skirt.obj".into(),
            pins,
            ..MeshSpec::default()
        };
        spec.build(MeshFiles::default()).unwrap()
    };
    let pinned_heights = |pins: MeshPins| {
        let model = build(pins);
        (0..model.particle_count())
            .filter(|&i| model.pinned[i])
            .map(|i| model.positions[i].y)
            .collect::<Vec<_>>()
    };
    // The top ring: 64 of 1536 vertices, all at y = 0.5 m.
    let top = pinned_heights(MeshPins::Highest(100.0 / 24.0));
    assert_eq!(top.len(), 64);
    assert!(top.iter().all(|&y| y == 0.5), "{top:?}");
    let bottom = pinned_heights(MeshPins::Box {
        min: Vec3::new(-1.0, -0.01, -1.0),
        max: Vec3::new(1.0, 0.01, 1.0),
    });
    assert_eq!(bottom.len(), 64);
    assert!(bottom.iter().all(|&y| y == 0.0));
    // Vertex 0 of the file is the first `v` line, (0.25, 0, 0), wherever it is numbered now.
    let model = build(MeshPins::Vertices(vec![0]));
    let pinned: Vec<Vec3> = (0..model.particle_count())
        .filter(|&i| model.pinned[i])
        .map(|i| model.positions[i])
        .collect();
    assert_eq!(pinned, vec![Vec3::new(0.25, 0.0, 0.0)]);
    // A vertex that does not exist is refused.
    let spec = MeshSpec {
        file: "assets/skirt.obj".into(),
        pins: MeshPins::Vertices(vec![5000]),
        ..MeshSpec::default()
    };
    assert!(spec.build(MeshFiles::default()).unwrap_err().to_string().contains("5000"));
}

/// `text` with its `v` lines listed in a shuffled order and its faces renumbered to match.
fn shuffle_vertices(text: &str, seed: u64) -> String {
    let vertices: Vec<&str> = text.lines().filter(|l| l.starts_with("v ")).collect();
    let mut order: Vec<usize> = (0..vertices.len()).collect();
    let mut state = seed;
    for i in (1..order.len()).rev() {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        order.swap(i, (state >> 33) as usize % (i + 1));
    }
    // order[k] = old vertex written at position k; new_number[old] = k.
    let mut new_number = vec![0; order.len()];
    for (k, &old) in order.iter().enumerate() {
        new_number[old] = k;
    }
    let mut out: Vec<String> = order.iter().map(|&old| vertices[old].to_string()).collect();
    for line in text.lines().filter(|l| !l.starts_with("v ")) {
        if let Some(corners) = line.strip_prefix("f ") {
            let renumbered: Vec<String> = corners
                .split_whitespace()
                .map(|corner| {
                    let (v, rest) = corner.split_once('/').map_or((corner, None), |(v, r)| (v, Some(r)));
                    let v = new_number[v.parse::<usize>().unwrap() - 1] + 1;
                    rest.map_or(v.to_string(), |r| format!("{v}/{r}"))
                })
                .collect();
            out.push(format!("f {}", renumbered.join(" ")));
        } else {
            out.push(line.to_string());
        }
    }
    out.join("\n") + "\n"
}

#[test]
fn a_mesh_numbered_any_way_gives_the_same_physics() {
    let text = std::fs::read_to_string("assets/tablecloth.obj").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let shuffled_path = dir.path().join("shuffled.obj");
    std::fs::write(&shuffled_path, shuffle_vertices(&text, 3)).unwrap();
    let preset = load_preset("tablecloth");
    let with_file = |file: &Path| {
        let mut preset = preset.clone();
        let [SceneObject::Mesh(mesh)] = preset.objects.as_mut_slice() else {
            panic!("the tablecloth preset is one mesh");
        };
        mesh.file = file.into();
        let mut cloth = preset.build().unwrap();
        run(&mut cloth, &preset.solver, &preset.material, 60);
        cloth.particles().positions().collect::<Vec<_>>()
    };
    let ordered = with_file(Path::new("assets/tablecloth.obj"));
    let shuffled = with_file(&shuffled_path);
    assert_ne!(ordered.first(), ordered.last(), "the cloth moved");
    // The particles are numbered by position before any constraint is made, so the two runs
    // share the numbering and the Gauss–Seidel order: equal bit for bit.
    assert_eq!(ordered, shuffled);
}

#[test]
fn a_version_1_preset_builds_the_model_its_grid_describes_and_runs_the_same() {
    for name in ["default", "tearable_sheet", "sphere_drape", "rip_the_flag"] {
        let preset = load_preset(name);
        assert_eq!(preset.version, 1, "{name} is a version-1 file");
        let grid: GridSpec = grid_of(&preset);
        assert_eq!(preset.objects(), vec![SceneObject::Grid(grid.clone())]);
        let direct_model = grid.build().unwrap();
        assert_eq!(
            build_scene_model(&preset.objects(), &preset.seams, Default::default()).unwrap(),
            direct_model,
            "{name}"
        );
        let mut direct = Cloth::new(direct_model, &preset.material, preset.colliders.clone()).unwrap();
        let mut built = preset.build().unwrap();
        run(&mut direct, &preset.solver, &preset.material, 60);
        run(&mut built, &preset.solver, &preset.material, 60);
        let bits = |c: &Cloth| {
            c.particles()
                .positions()
                .flat_map(|p| p.to_array().map(f32::to_bits))
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&direct), bits(&built), "{name}");
    }
}

#[test]
fn a_two_object_preset_round_trips_byte_for_byte() {
    let preset = load_preset("two_sheets_on_ball");
    assert_eq!(preset.objects.len(), 2);
    let text = preset.to_ron();
    let again = Preset::parse(&text, Path::new("saved.ron")).unwrap();
    assert_eq!(again, preset);
    assert_eq!(again.to_ron(), text);
    // A mesh object with every field spelled out, its own material and appearance included,
    // and a grid with its own material and appearance round-trip too.
    let mut mixed = preset.clone();
    *mixed.objects[1].material_mut() = Some(Material {
        tear_strain: Some(0.2),
        ..Material::default()
    });
    if let SceneObject::Grid(grid) = &mut mixed.objects[1] {
        grid.appearance = Some(Appearance {
            colour: Vec3::new(0.1, 0.2, 0.3),
            ..Appearance::default()
        });
    }
    mixed.objects.push(SceneObject::Mesh(MeshSpec {
        file: "assets/sphere.obj".into(),
        scale: 0.5,
        position: Vec3::new(0.0, 2.0, 0.0),
        pins: MeshPins::Highest(5.0),
        bending: false,
        pressure: Some(1.2),
        pressure_compliance: 1e-6,
        material: Some(Material {
            youngs_modulus: 2e5,
            tethers: false,
            ..Material::default()
        }),
        appearance: Some(Appearance {
            back_colour: Vec3::new(0.9, 0.9, 0.9),
            texture: Some("textures/dots.png".into()),
            texture_repeat: 3.0,
            ..Appearance::default()
        }),
    }));
    let text = mixed.to_ron();
    assert_eq!(text.matches("appearance:").count(), 2, "{text}");
    let again = Preset::parse(&text, Path::new("saved.ron")).unwrap();
    assert_eq!(again, mixed);
    assert_eq!(again.to_ron(), text);
    assert_eq!(again.objects[2].appearance().unwrap().texture_repeat, 3.0);
}

#[test]
fn an_objects_bad_appearance_is_reported_at_its_line_naming_the_object() {
    let text = "(\n    version: 2,\n    objects: [\n        Grid(columns: 10, appearance: (colour: (0.5, 0.5, 0.5))),\n        Grid(\n            columns: 12,\n            appearance: (\n                texture_repeat: 0.0,\n            ),\n        ),\n    ],\n    appearance: (texture_repeat: 2.0),\n)\n";
    let error = Preset::parse(text, Path::new("p.ron")).unwrap_err().to_string();
    assert!(error.starts_with("p.ron:8:17: "), "{error}");
    assert!(error.contains("objects[1] (Grid 12×40)"), "{error}");
    assert!(error.contains("its appearance") && error.contains("texture_repeat"), "{error}");
    // A version-1 `cloth` takes the scene's appearance only.
    let old = "(\n    version: 1,\n    cloth: (columns: 10, appearance: (colour: (1.0, 1.0, 1.0))),\n)\n";
    let error = Preset::parse(old, Path::new("p.ron")).unwrap_err().to_string();
    assert!(
        error.starts_with("p.ron:3:5: ") && error.contains("scene's `appearance`"),
        "{error}"
    );
}

#[test]
fn relative_mesh_and_texture_paths_are_looked_up_beside_the_preset_then_above_then_here() {
    let project = tempfile::tempdir().unwrap();
    let presets = project.path().join("presets");
    std::fs::create_dir_all(presets.join("meshes")).unwrap();
    std::fs::create_dir_all(project.path().join("assets")).unwrap();
    std::fs::write(presets.join("meshes/square.obj"), QUAD).unwrap();
    std::fs::write(project.path().join("assets/square.obj"), QUAD.replace("v 1 0 1", "v 2 0 1")).unwrap();
    // Beside the preset, under the project root (`presets/../assets`) and, for a file in
    // neither place, the working directory (the tests run in the repository).
    let text = "(\n    version: 2,\n    objects: [\n        Mesh(file: \"meshes/square.obj\"),\n        Mesh(file: \"assets/square.obj\", position: (0.0, 1.0, 0.0)),\n        Mesh(file: \"assets/tablecloth.obj\", position: (0.0, 3.0, 0.0)),\n    ],\n    appearance: (texture: \"assets/textures/dots.png\"),\n)\n";
    let path = presets.join("three.ron");
    std::fs::write(&path, text).unwrap();
    let preset = Preset::load(&path).unwrap();
    assert_eq!(preset.resolve(Path::new("meshes/square.obj")), presets.join("meshes/square.obj"));
    assert_eq!(
        preset.resolve(Path::new("assets/square.obj")),
        project.path().join("assets/square.obj")
    );
    assert_eq!(
        preset.resolve(Path::new("assets/textures/dots.png")),
        Path::new("assets/textures/dots.png")
    );
    let cloth = preset.build().unwrap();
    let tablecloth = load_obj(Path::new("assets/tablecloth.obj")).unwrap().positions.len();
    assert_eq!(cloth.particles().len(), 4 + 4 + tablecloth);
    let widest = |range: std::ops::Range<usize>| range.map(|i| cloth.particles().position(i).x).fold(f32::MIN, f32::max);
    assert_eq!(widest(0..4), 1.0, "the square beside the preset");
    assert_eq!(widest(4..8), 2.0, "the one under the project root");
    // Saving writes the paths as they were written.
    preset.save(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), preset.to_ron());
    assert!(preset.to_ron().contains("file: \"meshes/square.obj\""));
    assert!(!preset.to_ron().contains(&*project.path().to_string_lossy()));
    // The same text parsed from memory knows no directory: the mesh beside it is not found.
    let error = Preset::parse(text, Path::new("three.ron"))
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("meshes/square.obj: "), "{error}");
}

#[test]
fn cloth_and_objects_together_or_objects_in_version_1_are_refused() {
    let both = "(\n    version: 2,\n    cloth: (columns: 10),\n    objects: [Grid(columns: 10)],\n)\n";
    let error = Preset::parse(both, Path::new("p.ron")).unwrap_err().to_string();
    assert!(error.starts_with("p.ron:4:5: ") && error.contains("not both"), "{error}");
    let old = "(\n    version: 1,\n    objects: [Grid(columns: 10)],\n)\n";
    let error = Preset::parse(old, Path::new("p.ron")).unwrap_err().to_string();
    assert!(error.contains("version: 2"), "{error}");
    let missing = "(\n    version: 2,\n    objects: [Mesh(file: \"assets/nothing-here.obj\")],\n)\n";
    let preset = Preset::parse(missing, Path::new("p.ron")).unwrap();
    let error = preset.build().unwrap_err().to_string();
    assert!(error.contains("assets/nothing-here.obj"), "{error}");
}

#[test]
fn two_cloths_dropped_on_a_ball_come_to_rest_without_passing_through_each_other() {
    let preset = load_preset("two_sheets_on_ball");
    // The shipped scene's 600 frames, run once for every test that runs it as shipped
    // (`shipped_run`; self_collision.rs's every-preset test runs it too).
    let cloth = shipped_run("two_sheets_on_ball", SHIPPED_FRAMES, |run| run.cloth.clone());
    assert_eq!(cloth.piece_count(), 2, "two separate cloths");
    let stats = cloth.stats();
    assert!(stats.kinetic_energy < 1e-4, "at rest: {} J", stats.kinetic_energy);
    assert_eq!(intersecting_pairs(&cloth), 0, "no triangle of one cloth crosses the other");
    // They did land on each other: the small sheet (the second object) lies above the big one
    // over the ball's top.
    let (big, small) = (30 * 30, 24 * 24);
    let top_of = |range: std::ops::Range<usize>| range.map(|i| cloth.particles().position(i).y).fold(f32::MIN, f32::max);
    assert!(top_of(big..big + small) > top_of(0..big), "the second sheet rests on the first");
    // Without self-collision the same drop passes through.
    let mut params = preset.solver.clone();
    params.self_collision = false;
    let mut through = preset.build().unwrap();
    run(&mut through, &params, &preset.material, 600);
    assert!(intersecting_pairs(&through) > 0, "the check can fail");
}
