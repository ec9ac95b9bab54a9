//! Issue 32 item 3, through the public API: the OBJ export carries every vertex's rest-shape
//! texture coordinates (`vt`, named by the faces), so the shape of a tear can be measured from
//! the file: a grid's corners sit at the unit square's corners, a cut and torn sheet's faces
//! name the rest coordinates of their own particles, the file loads back through the project's
//! loader, a model without texture coordinates gets its rest positions, and the tests' OBJ
//! reader ([`ObjFile`]) counts a file's pieces as the cloth does.

use std::path::Path;

use drape::headless::write_obj;
use drape::preset::Preset;
use drape::sim::{icosphere, Cloth, GridSpec, Ray};
use glam::{Vec2, Vec3};

use crate::common::{grid_of, load_preset, run, untethered, validation_params, ObjFile};

/// The OBJ `write_obj` makes of `cloth`, parsed.
fn exported(cloth: &Cloth) -> (String, ObjFile) {
    let mut bytes = Vec::new();
    write_obj(cloth, &mut bytes).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let obj = ObjFile::parse(&text);
    (text, obj)
}

/// The rest grid's texture coordinates of rest position `p`: its (column / (columns − 1),
/// row / (rows − 1)), read off along the grid's first row and first column. A grid's jitter
/// moves particles across its plane, along neither.
fn grid_uv(spec: &GridSpec, p: Vec3) -> Vec2 {
    let origin = spec.position(0, 0);
    let along_row = spec.position(spec.columns - 1, 0) - origin;
    let along_column = spec.position(0, spec.rows - 1) - origin;
    Vec2::new(
        (p - origin).dot(along_row) / along_row.length_squared(),
        (p - origin).dot(along_column) / along_column.length_squared(),
    )
}

/// Asserts that every face corner of `obj` names a `vt` of two numbers equal to the rest
/// grid's coordinates of its particle's rest position (within 1e-5, a 2 600th of the tearable
/// sheet's spacing). Returns how many corners name a particle numbered `original` or more (a
/// copy made by a split).
fn assert_faces_name_rest_coordinates(obj: &ObjFile, cloth: &Cloth, spec: &GridSpec, original: usize) -> usize {
    let rest = &cloth.model().positions;
    let mut copies = 0;
    for (f, corner) in obj.faces.iter().flatten().enumerate() {
        let written = &obj.texcoords[corner.vt];
        assert_eq!(written.len(), 2, "face {}: vt {written:?}", f / 3);
        let expected = grid_uv(spec, rest[corner.v]);
        let off = (Vec2::new(written[0], written[1]) - expected).abs().max_element();
        assert!(off <= 1e-5, "face {} corner {:?}: vt {written:?}, rest {expected}", f / 3, corner);
        copies += usize::from(corner.v >= original);
    }
    copies
}

#[test]
fn a_grids_corners_have_the_unit_squares_corners_as_texture_coordinates() {
    let preset = load_preset("tearable_sheet");
    let spec = grid_of(&preset);
    let mut cloth = preset.build().unwrap();
    // Half a second of sagging: the written coordinates are the rest shape's, not the pose's.
    run(&mut cloth, &preset.solver, &preset.material, 30);
    let (_, obj) = exported(&cloth);
    assert_eq!(obj.texcoords.len(), obj.positions.len(), "one vt per vertex on a grid");
    let rest = &cloth.model().positions;
    let (last_column, last_row) = (spec.columns - 1, spec.rows - 1);
    for (column, row, uv) in [
        (0, 0, [0.0, 0.0]),
        (last_column, 0, [1.0, 0.0]),
        (0, last_row, [0.0, 1.0]),
        (last_column, last_row, [1.0, 1.0]),
    ] {
        let at_corner: Vec<usize> = (0..rest.len()).filter(|&i| rest[i] == spec.position(column, row)).collect();
        assert_eq!(at_corner.len(), 1, "one particle rests at ({column}, {row})");
        let corners: Vec<_> = obj.faces.iter().flatten().filter(|c| c.v == at_corner[0]).collect();
        assert!(!corners.is_empty(), "a face has the corner ({column}, {row})");
        for corner in corners {
            assert_eq!(obj.texcoords[corner.vt], uv, "({column}, {row}), {corner:?}");
        }
    }
    let bottom_right = spec.index(last_column, last_row) as usize;
    assert_ne!(obj.positions[bottom_right], rest[bottom_right], "the sheet has sagged");
}

/// The tearable sheet with a cut from its left edge a third of the way in, halfway down, then
/// its bottom-right corner held and pulled 1.5 m down and toward the viewer over 1.5 s.
fn cut_and_torn_sheet(preset: &Preset) -> Cloth {
    let spec = grid_of(preset);
    let mut cloth = preset.build().unwrap();
    let (left, y) = (spec.origin.x - spec.width / 2.0, spec.origin.y - spec.height / 2.0);
    let eye = Vec3::new(left, y, 3.0);
    let toward = |x: f32| Ray {
        origin: eye,
        direction: Vec3::new(x, y, 0.0) - eye,
    };
    let cut = cloth.cut(&toward(left - 0.05), &toward(left + spec.width / 3.0));
    assert!(cut > 0, "the cut crosses the sheet");
    let corner = spec.index(spec.columns - 1, spec.rows - 1);
    cloth.grab(corner).unwrap();
    let start = cloth.particles().position(corner as usize);
    let dt = preset.solver.dt;
    let frames = (1.5 / dt).round() as u32;
    for frame in 1..=frames {
        cloth.drag_to(start + Vec3::new(0.0, -1.0, 1.0).normalize() * frame as f32 * dt);
        cloth.step(&preset.solver, &preset.material).unwrap();
    }
    assert!(
        cloth.torn_edges() > cut,
        "the pull tore {} edges past the cut's {cut}",
        cloth.torn_edges() - cut
    );
    cloth
}

#[test]
fn after_a_cut_and_a_tear_every_face_names_its_particles_rest_coordinates() {
    let preset = load_preset("tearable_sheet");
    let spec = grid_of(&preset);
    let cloth = cut_and_torn_sheet(&preset);
    let original = (spec.columns * spec.rows) as usize;
    let (_, obj) = exported(&cloth);
    assert_eq!(obj.positions.len(), cloth.particles().len());
    assert_eq!(obj.faces.len(), cloth.triangles().len());
    let copies = assert_faces_name_rest_coordinates(&obj, &cloth, &spec, original);
    assert!(copies > 0, "faces name the copies the splits made");
    assert_eq!(obj.pieces(), cloth.piece_count(), "the file's pieces are the cloth's");
}

#[test]
fn the_written_obj_loads_back_with_its_texture_coordinates() {
    let preset = load_preset("tearable_sheet");
    let cloth = preset.build().unwrap();
    let (text, _) = exported(&cloth);
    let mesh = drape::mesh_file::parse_obj(&text, Path::new("sheet.obj")).unwrap();
    assert_eq!(mesh.triangles, cloth.triangles());
    assert_eq!(mesh.corner_uvs, cloth.model().corner_uvs);

    let torn = cut_and_torn_sheet(&preset);
    let (text, obj) = exported(&torn);
    let mesh = drape::mesh_file::parse_obj(&text, Path::new("torn.obj")).unwrap();
    assert_eq!(mesh.positions, obj.positions);
    assert_eq!(mesh.corner_uvs.len(), torn.triangles().len());
    for (t, face) in obj.faces.iter().enumerate() {
        for (k, corner) in face.iter().enumerate() {
            let written = &obj.texcoords[corner.vt];
            assert_eq!(mesh.corner_uvs[t][k], Vec2::new(written[0], written[1]), "triangle {t} corner {k}");
        }
    }
}

#[test]
fn a_model_without_texture_coordinates_gets_its_rest_positions() {
    let model = icosphere(Vec3::new(0.0, 1.0, 0.0), 0.3, 2).build().unwrap();
    assert!(model.corner_uvs.is_empty());
    let mut cloth = Cloth::new(model, &untethered(), Vec::new()).unwrap();
    run(&mut cloth, &validation_params(1.0 / 60.0, 4, 1), &untethered(), 20);
    let (_, obj) = exported(&cloth);
    let rest = &cloth.model().positions;
    assert_eq!(obj.texcoords.len(), rest.len());
    for corner in obj.faces.iter().flatten() {
        assert_eq!(corner.vt, corner.v);
        assert_eq!(obj.texcoords[corner.vt], rest[corner.v].to_array(), "{corner:?}");
        assert_ne!(obj.positions[corner.v], rest[corner.v], "the sphere has fallen");
    }
}

/// The test helper's piece count: faces sharing a `v` are one piece, faces whose corners only
/// coincide in position (a split vertex's copies) are not.
#[test]
fn obj_pieces_are_joined_through_shared_vertices_only() {
    let vertices = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 2 0 0\nv 1 0 0\n";
    let texture_and_normals = "vt 0 0\nvt 1 0\nvt 0 1\nvt 1 1\nvt 2 0\nvt 1 0\n".to_owned() + &"vn 0 0 1\n".repeat(6);
    let joined = ObjFile::parse(&format!(
        "{vertices}{texture_and_normals}f 1/1/1 2/2/2 3/3/3\nf 2/2/2 5/5/5 4/4/4\n"
    ));
    assert_eq!((joined.face_pieces(), joined.pieces()), (vec![0, 0], 1));
    // Vertex 6 is a copy of vertex 2 (same position) that the second face took over.
    let split = ObjFile::parse(&format!(
        "{vertices}{texture_and_normals}f 1/1/1 2/2/2 3/3/3\nf 6/6/6 5/5/5 4/4/4\n"
    ));
    assert_eq!((split.face_pieces(), split.pieces()), (vec![0, 1], 2));
}
