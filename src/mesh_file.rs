//! Wavefront OBJ files as cloth meshes.
//!
//! [`tobj`] parses the file (positions, faces in any of the `v`, `v/vt`, `v//vn`, `v/vt/vn`
//! forms, negative indices, texture coordinates); polygons are split into fans, as tobj does.
//! Every group and object of the file becomes part of one mesh, numbered like the file's `v`
//! lines (vertex 0 is the first `v` line), so pins by vertex number mean what a modelling tool
//! shows. The mesh is then checked ([`TriangleMesh::check`]) and every problem, tobj's or
//! ours, is reported as `file:line: what is wrong`: tobj reports no lines, so the loader keeps
//! the line of every `v` and of every triangle's `f` and points at the first line of the kind
//! tobj refused.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::{Vec2, Vec3};

use crate::input_file::{decode_text, read_limited, MESH_LIMIT};
use crate::sim::{MeshDefect, TriangleMesh};

/// Why an OBJ file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum MeshFileError {
    /// The file could not be read. The I/O error is part of the message and deliberately not
    /// the error's `source()`, so an error chain (`{:#}`) does not print it twice.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error (or why the file was refused, see [`crate::input_file`]).
        error: std::io::Error,
    },
    /// The text is not a usable mesh; `line` is 1-based (0 when the whole file is at fault,
    /// and then no line is printed).
    #[error("{}{}: {message}", path.display(), at_line(*line))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Line of the problem.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// ":LINE" for a 1-based line, nothing for 0 (the whole file).
fn at_line(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}

/// The checks a mesh read from a file must pass: a cloth's ([`TriangleMesh::check`]) or a
/// collider's ([`TriangleMesh::check_as_collider`]).
pub type MeshCheck = fn(&TriangleMesh) -> Result<(), MeshDefect>;

/// Reads the OBJ file at `path` into a triangle mesh checked as a cloth.
pub fn load_obj(path: &Path) -> Result<TriangleMesh, MeshFileError> {
    load_obj_checked(path, TriangleMesh::check)
}

/// [`load_obj`] with the checks `check`.
pub fn load_obj_checked(path: &Path, check: MeshCheck) -> Result<TriangleMesh, MeshFileError> {
    let bytes = read_limited(path, MESH_LIMIT).map_err(|error| MeshFileError::Io { path: path.into(), error })?;
    let text = decode_text(bytes).map_err(|(line, _)| MeshFileError::Invalid {
        path: path.into(),
        line,
        message: "not UTF-8 text (an OBJ file is text)".into(),
    })?;
    parse_obj_checked(&text, path, check)
}

/// Parses OBJ text into a mesh checked as a cloth; `path` is only used in error messages.
pub fn parse_obj(text: &str, path: &Path) -> Result<TriangleMesh, MeshFileError> {
    parse_obj_checked(text, path, TriangleMesh::check)
}

/// [`parse_obj`] with the checks `check`.
pub fn parse_obj_checked(text: &str, path: &Path, check: MeshCheck) -> Result<TriangleMesh, MeshFileError> {
    let lines = LineIndex::of(text);
    let invalid = |line: usize, message: String| MeshFileError::Invalid {
        path: path.into(),
        line,
        message,
    };
    let options = tobj::LoadOptions {
        triangulate: true,
        ..Default::default()
    };
    let (models, _materials) = tobj::load_obj_buf(&mut text.as_bytes(), &options, |_| Ok(Default::default()))
        .map_err(|e| invalid(lines.blame(text, e), format!("{e}")))?;
    let mesh = assemble(&models, &lines).map_err(|(line, message)| invalid(line, message))?;
    check(&mesh).map_err(|defect| {
        let line = match &defect {
            MeshDefect::Triangle { triangle, .. } => lines.face_of_triangle.get(*triangle).copied().unwrap_or(0),
            MeshDefect::Vertex { vertex, .. } => lines.vertex.get(*vertex).copied().unwrap_or(0),
            MeshDefect::Mesh(_) => 0,
        };
        invalid(line, defect.to_string())
    })?;
    Ok(mesh)
}

/// The 1-based lines of the file's `v` statements and of the `f` statement each triangle
/// came from (a face of n corners gives n − 2 triangles, in file order).
struct LineIndex {
    vertex: Vec<usize>,
    face_of_triangle: Vec<usize>,
    positions: Vec<Vec3>,
}

impl LineIndex {
    fn of(text: &str) -> Self {
        let mut index = LineIndex {
            vertex: Vec::new(),
            face_of_triangle: Vec::new(),
            positions: Vec::new(),
        };
        for (number, line) in text.lines().enumerate() {
            let mut words = line.split_whitespace();
            match words.next() {
                Some("v") => {
                    index.vertex.push(number + 1);
                    index.positions.push(vertex_position(&words.collect::<Vec<_>>()));
                }
                Some("f") => {
                    let corners = words.count();
                    let triangles = corners.saturating_sub(2).max(1);
                    index.face_of_triangle.extend(std::iter::repeat_n(number + 1, triangles));
                }
                _ => {}
            }
        }
        index
    }

    /// The first line of the kind tobj refused (tobj stops at the first problem).
    fn blame(&self, text: &str, error: tobj::LoadError) -> usize {
        use tobj::LoadError as E;
        let keyword = match error {
            E::PositionParseError | E::ScalingByZeroError | E::ColorParseError => "v",
            E::NormalParseError => "vn",
            E::TexcoordParseError => "vt",
            E::FaceParseError
            | E::InvalidPolygon
            | E::FaceVertexOutOfBounds
            | E::FaceTexCoordOutOfBounds
            | E::FaceNormalOutOfBounds
            | E::FaceColorOutOfBounds => "f",
            _ => return first_line_where(text, |_, _| true),
        };
        let counts = Counts::of(text);
        first_line_where(text, |word, rest| word == keyword && !statement_is_valid(word, rest, &counts))
    }
}

/// The position of a `v x y z [w | r g b]` statement, divided by w as tobj does; NaN where a
/// number is missing.
fn vertex_position(words: &[&str]) -> Vec3 {
    let number = |k: usize| words.get(k).and_then(|w| w.parse::<f32>().ok()).unwrap_or(f32::NAN);
    let xyz = Vec3::new(number(0), number(1), number(2));
    if words.len() == 4 {
        xyz / number(3)
    } else {
        xyz
    }
}

/// How many `v`, `vt` and `vn` statements the file has (face indices must stay within them).
struct Counts {
    v: usize,
    vt: usize,
    vn: usize,
}

impl Counts {
    fn of(text: &str) -> Self {
        let mut counts = Counts { v: 0, vt: 0, vn: 0 };
        for line in text.lines() {
            match line.split_whitespace().next() {
                Some("v") => counts.v += 1,
                Some("vt") => counts.vt += 1,
                Some("vn") => counts.vn += 1,
                _ => {}
            }
        }
        counts
    }
}

/// 1-based number of the first line whose first word and the rest satisfy `bad`, or 0.
fn first_line_where(text: &str, mut bad: impl FnMut(&str, &[&str]) -> bool) -> usize {
    text.lines()
        .position(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            words.split_first().is_some_and(|(word, rest)| bad(word, rest))
        })
        .map_or(0, |i| i + 1)
}

/// Whether a `v`, `vt`, `vn` or `f` statement is well formed (numbers parse, face indices
/// refer to existing data). Only used to find the line tobj refused.
fn statement_is_valid(word: &str, rest: &[&str], counts: &Counts) -> bool {
    let numbers = |min: usize, max: usize| (min..=max).contains(&rest.len()) && rest.iter().all(|w| w.parse::<f32>().is_ok());
    match word {
        "v" => numbers(3, 6) && rest.len() != 5 && vertex_position(rest).is_finite(),
        "vt" => numbers(2, 3),
        "vn" => numbers(3, 3),
        "f" => rest.len() >= 3 && rest.iter().all(|corner| corner_is_valid(corner, counts)),
        _ => true,
    }
}

/// A face corner `v`, `v/vt`, `v//vn` or `v/vt/vn` whose indices (1-based, or negative from
/// the end) exist.
fn corner_is_valid(corner: &str, counts: &Counts) -> bool {
    let in_range = |field: &str, count: usize| match field.parse::<i64>() {
        Ok(i) if i > 0 => i as usize <= count,
        Ok(i) if i < 0 => i.unsigned_abs() as usize <= count,
        _ => false,
    };
    let fields: Vec<&str> = corner.split('/').collect();
    match fields.as_slice() {
        [v] => in_range(v, counts.v),
        [v, t] => in_range(v, counts.v) && in_range(t, counts.vt),
        [v, "", n] => in_range(v, counts.v) && in_range(n, counts.vn),
        [v, t, n] => in_range(v, counts.v) && in_range(t, counts.vt) && in_range(n, counts.vn),
        _ => false,
    }
}

/// Joins tobj's models into one mesh numbered like the file's `v` lines. tobj numbers each
/// model's positions in order of first use; a position is mapped back to the first `v` line
/// with exactly those coordinates. Errors carry a line.
fn assemble(models: &[tobj::Model], lines: &LineIndex) -> Result<TriangleMesh, (usize, String)> {
    // Walked backwards so that of two identical `v` lines the first one wins.
    let mut by_bits: HashMap<[u32; 3], u32> = HashMap::new();
    for (i, p) in lines.positions.iter().enumerate().rev() {
        by_bits.insert(p.to_array().map(f32::to_bits), i as u32);
    }
    let mut mesh = TriangleMesh {
        positions: lines.positions.clone(),
        ..Default::default()
    };
    let with_uvs = models.iter().all(|m| !m.mesh.texcoord_indices.is_empty());
    for model in models {
        let m = &model.mesh;
        let global = |local: u32| {
            let p = Vec3::from_slice(&m.positions[3 * local as usize..3 * local as usize + 3]);
            by_bits.get(&p.to_array().map(f32::to_bits)).copied()
        };
        for (k, corners) in m.indices.chunks_exact(3).enumerate() {
            let triangle = [0, 1, 2].map(|c| global(corners[c]));
            let unmatched = || (0, "a face vertex matches no `v` line (tobj and this loader disagree)".to_string());
            mesh.triangles.push([
                triangle[0].ok_or_else(unmatched)?,
                triangle[1].ok_or_else(unmatched)?,
                triangle[2].ok_or_else(unmatched)?,
            ]);
            if with_uvs {
                let uv = |c: usize| {
                    let t = m.texcoord_indices[3 * k + c] as usize;
                    Vec2::new(m.texcoords[2 * t], m.texcoords[2 * t + 1])
                };
                mesh.corner_uvs.push([uv(0), uv(1), uv(2)]);
            }
        }
    }
    if mesh.positions.iter().any(|p| !p.is_finite()) {
        let v = mesh.positions.iter().position(|p| !p.is_finite()).unwrap_or(0);
        return Err((lines.vertex[v], "a vertex needs three finite coordinates".into()));
    }
    Ok(mesh)
}
