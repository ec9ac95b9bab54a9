//! Texture coordinates per vertex, for whoever draws or exports the surface.
//!
//! A model keeps its texture coordinates per triangle corner ([`Model::corner_uvs`]): a
//! particle on a texture seam (a sphere's wrap-around) has different coordinates in the
//! triangles on either side. A vertex format with one coordinate per vertex (a GPU mesh, an
//! OBJ file's `vt` lines) therefore needs a vertex per particle and distinct coordinate of its
//! corners; [`TexturedVertices`] lists them. The coordinates describe the rest shape: a tear
//! ([`super::tearing`]) splits a particle by moving triangles to a copy, and each triangle
//! keeps its corners' coordinates, so every copy keeps the coordinates it had before the
//! split; a cut that snaps a vertex onto the stroke moves its coordinates with its rest
//! position.
//!
//! [`Model::corner_uvs`]: super::model::Model::corner_uvs

use glam::Vec2;

/// The vertices of a textured surface: one per particle and distinct texture coordinate of
/// its triangle corners. A particle whose corners agree (the common case) is one vertex; one
/// on a texture seam gets a vertex per side. Particle `g`'s first vertex is vertex `g`, so a
/// model without seams has exactly its particles as vertices; extra seam vertices follow.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TexturedVertices {
    /// The particle each vertex stands for.
    pub particle: Vec<u32>,
    /// Each vertex's texture coordinates ((0, 0) for a model without any).
    pub uv: Vec<Vec2>,
    /// The triangles in vertex indices, in the order of the model's.
    pub triangles: Vec<[u32; 3]>,
}

impl TexturedVertices {
    /// The vertices of `triangles` over `particle_count` particles with `corner_uvs` (one
    /// entry per triangle, or empty).
    pub fn new(particle_count: usize, triangles: &[[u32; 3]], corner_uvs: &[[Vec2; 3]]) -> Self {
        let mut first: Vec<Option<Vec2>> = vec![None; particle_count];
        let mut extra = std::collections::HashMap::new();
        let mut vertices = Self {
            particle: (0..particle_count as u32).collect(),
            uv: vec![Vec2::ZERO; particle_count],
            triangles: Vec::with_capacity(triangles.len()),
        };
        for (t, triangle) in triangles.iter().enumerate() {
            let uvs = corner_uvs.get(t).copied().unwrap_or_default();
            let ids = [0, 1, 2].map(|k| {
                let (g, uv) = (triangle[k], uvs[k]);
                match first[g as usize] {
                    None => {
                        first[g as usize] = Some(uv);
                        vertices.uv[g as usize] = uv;
                        g
                    }
                    Some(seen) if seen == uv => g,
                    Some(_) => *extra.entry((g, uv.x.to_bits(), uv.y.to_bits())).or_insert_with(|| {
                        vertices.particle.push(g);
                        vertices.uv.push(uv);
                        (vertices.particle.len() - 1) as u32
                    }),
                }
            });
            vertices.triangles.push(ids);
        }
        vertices
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seam_particle_gets_a_vertex_per_side_and_others_stay_single() {
        // Two triangles share the edge 1-2; particle 2's corners disagree (a seam), 1's agree.
        let triangles = [[0, 1, 2], [2, 1, 3]];
        let uvs = [
            [Vec2::new(0.9, 0.0), Vec2::new(1.0, 0.5), Vec2::new(1.0, 1.0)],
            [Vec2::new(0.0, 1.0), Vec2::new(1.0, 0.5), Vec2::new(0.1, 0.4)],
        ];
        let vertices = TexturedVertices::new(4, &triangles, &uvs);
        assert_eq!(vertices.particle, vec![0, 1, 2, 3, 2]);
        assert_eq!(vertices.triangles, vec![[0, 1, 2], [4, 1, 3]]);
        for (t, corners) in vertices.triangles.iter().enumerate() {
            for (k, &r) in corners.iter().enumerate() {
                assert_eq!(vertices.uv[r as usize], uvs[t][k], "triangle {t} corner {k}");
            }
        }
        // Without texture coordinates every particle is one vertex at (0, 0).
        let plain = TexturedVertices::new(4, &triangles, &[]);
        assert_eq!((plain.particle, plain.triangles), ((0..4).collect(), triangles.to_vec()));
        assert!(plain.uv.iter().all(|&uv| uv == Vec2::ZERO));
    }
}
