//! Generated closed meshes for tests and scenes: the icosphere.

use std::collections::BTreeMap;

use glam::Vec3;

use super::model::ModelBuilder;

/// The regular icosahedron's 12 vertices (before scaling onto the sphere): the corners of three
/// golden rectangles.
fn icosahedron_vertices() -> [Vec3; 12] {
    let t = (1.0 + 5f32.sqrt()) / 2.0;
    [
        Vec3::new(-1.0, t, 0.0),
        Vec3::new(1.0, t, 0.0),
        Vec3::new(-1.0, -t, 0.0),
        Vec3::new(1.0, -t, 0.0),
        Vec3::new(0.0, -1.0, t),
        Vec3::new(0.0, 1.0, t),
        Vec3::new(0.0, -1.0, -t),
        Vec3::new(0.0, 1.0, -t),
        Vec3::new(t, 0.0, -1.0),
        Vec3::new(t, 0.0, 1.0),
        Vec3::new(-t, 0.0, -1.0),
        Vec3::new(-t, 0.0, 1.0),
    ]
}

/// The icosahedron's 20 faces, counter-clockwise seen from outside.
const ICOSAHEDRON_FACES: [[u32; 3]; 20] = [
    [0, 11, 5],
    [0, 5, 1],
    [0, 1, 7],
    [0, 7, 10],
    [0, 10, 11],
    [1, 5, 9],
    [5, 11, 4],
    [11, 10, 2],
    [10, 7, 6],
    [7, 1, 8],
    [3, 9, 4],
    [3, 4, 2],
    [3, 2, 6],
    [3, 6, 8],
    [3, 8, 9],
    [4, 9, 5],
    [2, 4, 11],
    [6, 2, 10],
    [8, 6, 7],
    [9, 8, 1],
];

/// A closed sphere mesh of `radius` m around `centre`: the regular icosahedron with each
/// triangle split into four `subdivisions` times (the new vertices pushed out onto the
/// sphere), so 10·4^s + 2 particles and 20·4^s triangles, counter-clockwise seen from outside,
/// edges about 1.05 · radius / 2^s long. It comes as a builder with the triangles (masses lumped
/// from their areas), one stretch edge per triangle edge
/// ([`ModelBuilder::add_triangle_edges`]) and a bending hinge per edge
/// ([`ModelBuilder::add_hinges_from_triangles`]), so the caller can pin particles or make it a
/// pressure body ([`ModelBuilder::add_pressure_body`] with every triangle) before building.
pub fn icosphere(centre: Vec3, radius: f32, subdivisions: u32) -> ModelBuilder {
    let mut directions: Vec<Vec3> = icosahedron_vertices().iter().map(|v| v.normalize()).collect();
    let mut faces = ICOSAHEDRON_FACES.to_vec();
    for _ in 0..subdivisions {
        faces = subdivide(&mut directions, &faces);
    }
    let mut builder = ModelBuilder::new();
    for d in directions {
        builder.add_particle(centre + d * radius, 0.0);
    }
    for face in faces {
        builder.add_triangle(face);
    }
    builder.add_triangle_edges();
    builder.add_hinges_from_triangles();
    builder
}

/// Splits every face into four at its edges' midpoints, pushed out onto the unit sphere (each
/// midpoint made once, numbered in the order the faces first reach it).
fn subdivide(directions: &mut Vec<Vec3>, faces: &[[u32; 3]]) -> Vec<[u32; 3]> {
    let mut midpoints: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut midpoint = |a: u32, b: u32, directions: &mut Vec<Vec3>| {
        *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
            directions.push((directions[a as usize] + directions[b as usize]).normalize());
            (directions.len() - 1) as u32
        })
    };
    let mut finer = Vec::with_capacity(faces.len() * 4);
    for &[a, b, c] in faces {
        let ab = midpoint(a, b, directions);
        let bc = midpoint(b, c, directions);
        let ca = midpoint(c, a, directions);
        finer.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
    }
    finer
}
