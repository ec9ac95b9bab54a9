//! A scene's seams as a preset writes them: two runs of vertices, named in their objects'
//! own numbering, sewn pair by pair ([`crate::sim::sewing`]).

use serde::{Deserialize, Serialize};

use crate::sim::error::MAX_PARTICLES;
use crate::sim::sewing::check_settings;
use crate::sim::SimError;

/// A seam: the k-th vertex of run `a` is sewn to the k-th of run `b`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeamSpec {
    /// The first run (its spacing sets how much seam each stitch holds).
    pub a: SeamSide,
    /// The second run, as long as the first.
    pub b: SeamSide,
    /// Time in s to pull the seam shut, from the start of the scene. Default 1; range [0, 60].
    #[serde(default = "default_close_time")]
    pub close_time: f32,
    /// Force per length of seam at which its stitches break, in N/m. Default none: they
    /// never do; range (0, 1e7].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strength: Option<f32>,
}

fn default_close_time() -> f32 {
    1.0
}

/// One run of a seam: vertices of one object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeamSide {
    /// The object, an index into `objects` (0 for a version-1 scene's `cloth`). Default 0.
    #[serde(default)]
    pub object: usize,
    /// The vertices, in the object's own numbering: a grid's particle at (column, row) is
    /// `row · columns + column`, a mesh's vertices count from 0 in the file's order.
    pub vertices: VertexRun,
}

/// Vertices of a seam's run, in order along the seam.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum VertexRun {
    /// `count` vertices from `first`, `step` apart (negative: backwards); a grid's column is
    /// a run with `step` = `columns`.
    Run {
        /// The first vertex.
        first: u32,
        /// The difference between neighbours.
        step: i32,
        /// Number of vertices, at least 1.
        count: u32,
    },
    /// These vertices.
    List(Vec<u32>),
}

impl VertexRun {
    /// Number of vertices.
    pub fn len(&self) -> usize {
        match self {
            VertexRun::Run { count, .. } => *count as usize,
            VertexRun::List(list) => list.len(),
        }
    }

    /// Whether the run names no vertex.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The vertices, or why the run cannot be walked (it would go below vertex 0 or past
    /// u32); checked by [`SeamSpec::validate`].
    pub fn vertices(&self) -> Result<Vec<u32>, String> {
        match self {
            VertexRun::List(list) => Ok(list.clone()),
            VertexRun::Run { first, step, count } => (0..i64::from(*count))
                .map(|k| {
                    let v = i64::from(*first) + k * i64::from(*step);
                    u32::try_from(v).map_err(|_| format!("the run reaches vertex {v}"))
                })
                .collect(),
        }
    }
}

impl SeamSpec {
    /// Checks the settings and the runs' shapes against a scene of `objects` objects (whether
    /// the vertices exist is checked when the scene is built).
    pub fn validate(&self, objects: usize) -> Result<(), SimError> {
        self.check(objects).map_err(|(_, e)| e)
    }

    /// [`Self::validate`], and the key the error is at: `close_time` or `strength` for a
    /// setting out of range, the side (`a` or `b`) whose object or run is refused, `a` for
    /// runs of different lengths.
    pub fn check(&self, objects: usize) -> Result<(), (&'static str, SimError)> {
        check_settings(self.close_time, self.strength).map_err(|e| match e {
            SimError::InvalidParameter { name, .. } => (name, e),
            _ => ("a", e),
        })?;
        for (name, side) in [("a", &self.a), ("b", &self.b)] {
            let refuse = |why: String| Err((name, SimError::InvalidGeometry(format!("seam side `{name}`: {why}"))));
            if side.object >= objects {
                return refuse(format!("object {} does not exist (the scene has {objects})", side.object));
            }
            if side.vertices.is_empty() || side.vertices.len() > MAX_PARTICLES {
                return refuse(format!("{} vertices (1 to {MAX_PARTICLES} expected)", side.vertices.len()));
            }
            if let Err(why) = side.vertices.vertices() {
                return refuse(why);
            }
        }
        if self.a.vertices.len() != self.b.vertices.len() {
            let why = format!(
                "the seam's runs differ in length: `a` has {} vertices, `b` {}",
                self.a.vertices.len(),
                self.b.vertices.len()
            );
            return Err(("a", SimError::InvalidGeometry(why)));
        }
        Ok(())
    }

    /// The sewn pairs as particles of the joined model, given each object's `numbering`; the
    /// error names the first vertex its object does not have, as `a` or `b`.
    pub fn pairs(&self, numbering: &[ObjectNumbering]) -> Result<Vec<[u32; 2]>, (&'static str, String)> {
        let side = |name: &'static str, side: &SeamSide| -> Result<Vec<u32>, (&'static str, String)> {
            let object = &numbering[side.object];
            let vertices = side.vertices.vertices().map_err(|why| (name, why))?;
            vertices
                .into_iter()
                .map(|v| {
                    object.particle(v).ok_or_else(|| {
                        let why = format!("vertex {v} does not exist: objects[{}] has {} vertices", side.object, object.count);
                        (name, why)
                    })
                })
                .collect()
        };
        let (a, b) = (side("a", &self.a)?, side("b", &self.b)?);
        Ok(a.into_iter().zip(b).map(|(a, b)| [a, b]).collect())
    }
}

/// Where an object's vertices went in the joined model.
#[derive(Debug, Clone)]
pub struct ObjectNumbering {
    /// Its first particle.
    pub first: u32,
    /// Its vertex count.
    pub count: u32,
    /// Each vertex's particle within the object (a mesh's locality order), or `None` when
    /// vertex k is particle k (a grid).
    pub particle_of: Option<Vec<u32>>,
}

impl ObjectNumbering {
    /// The particle of vertex `v`, if the object has it.
    pub fn particle(&self, v: u32) -> Option<u32> {
        let within = match &self.particle_of {
            Some(map) => *map.get(v as usize)?,
            None if v < self.count => v,
            None => return None,
        };
        Some(self.first + within)
    }
}
