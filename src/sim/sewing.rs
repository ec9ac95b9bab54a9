//! Sewing: seams that join runs of vertices, of one piece of cloth or of two, with stitches
//! (docs/physics.md §12).
//!
//! A seam is a list of stitches, each a distance constraint of kind [`EdgeKind::Seam`]
//! between a vertex of one run and the matching vertex of the other, with compliance 0. Its
//! rest length starts at the pair's distance L₀ when the seam is made and is pulled in
//! linearly to 0 over the seam's closing time T, as the garment tools' sewing springs pull
//! pattern pieces together, but in a set time:
//! ```text
//! L(t) = L₀ · max(0, 1 − t / T)          (t from the start of the scene; T = 0: shut at once)
//! ```
//! The rest length moves at L₀/T, a speed the solver follows where nothing pulls against the
//! seam (a stitch with compliance 0 meets its rest length every substep), so the seam is shut
//! at T to within the solver's residual. From then on a stitch is a rigid constraint of
//! length 0: the two vertices move as one, and the seam holds whatever hangs from it.
//!
//! A stitch is a live distance constraint, so what is built on those treats a sewn pair as
//! joined: self-contact skips the pairs, faces and edges a stitch joins (two coincident
//! vertices would otherwise be pushed a thickness apart and the seam could never shut), the
//! pieces a seam joins count as one, and tethers measure through it, unless it has a strength
//! (below). Tethers are built at the stitches' lengths of the moment, so they are rebuilt in
//! the frame a seam shuts: built through its open stitches, they would leave what hangs from
//! it held by the stitches alone, beside tethered cloth, which the tethers' pass (after the
//! stitches in each sweep) holds at its pins' distances; each sweep would undo most of the
//! stitch's pull, and a 0.3 m panel of cotton hanging from a pinned one gaped 0.3 mm (1.4 mm
//! while it swung; 2 mm at 1 kg/m², 2 cm at 10 kg/m²; 0.05 mm now).
//!
//! # Strength
//! A seam with a strength S (N/m: the force per length of seam at which it breaks, as seam
//! strength tests report it) gives stitch k the length of seam ℓ_k it holds: half the rest
//! distances to its neighbours along the first run (one spacing for a seam of one stitch).
//! The stitch breaks, and is removed, when its force at the end of a frame exceeds S ℓ_k; the
//! force of a distance constraint is its multiplier over the substep squared, |λ| / h²
//! (docs/physics.md §1). The breaks run in seam and stitch order, so the results stay
//! bit-identical on any thread count. Tethers do not measure through the stitches of a seam
//! with a strength ([`Model::breakable_stitches`]): a tether reaching through them would hold
//! what hangs from the seam straight from the pins, at its rest distance, and the stitches,
//! carrying none of its weight, would never break (a 10 × 10 panel of 0.9 kg hung from a
//! 0.3 m seam of strength 7 N/m, a quarter of its 29 N/m, held). And the particles such a
//! stitch holds are tethered to nothing (the cloth's `breakable_sewn_particles`): the tethered
//! side's seam row, held at its pins' distances by the tethers' pass after the stitches in
//! each sweep, undid most of their pull, and the seam gaped 12 mm under a load a quarter of
//! its strength (5 µm without tethers, and now).
//!
//! # Tearing and cutting
//! A tear or cut that splits a sewn vertex removes that vertex's stitches: the seam opens where
//! the cloth parts. A cut stroke crossing a stitch that is still open cuts it.

use glam::Vec3;

use super::error::{check_range, SimError};
use super::model::{Compliance, DistanceConstraint, EdgeKind, Model};

/// Longest closing time a seam may have, in s.
pub const MAX_CLOSE_SECONDS: f32 = 60.0;

/// Highest seam strength, in N/m (a strong industrial seam holds about 10⁵ N/m).
pub const MAX_STRENGTH: f32 = 1.0e7;

/// A seam: stitches pulled shut over a time, then held rigid (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct Seam {
    /// The distance constraint ids of its stitches (kind [`EdgeKind::Seam`]), in order along
    /// the seam.
    pub stitches: Vec<u32>,
    /// Each stitch's rest length when the seam was made, in m: where the pull-in starts.
    pub open_lengths: Vec<f32>,
    /// The length of seam each stitch holds, in m (for its strength).
    pub shares: Vec<f32>,
    /// Time to pull the seam shut, in s; 0 shuts it at once.
    pub close_seconds: f32,
    /// Force per length of seam at which stitches break, in N/m; `None`: they never do.
    pub strength: Option<f32>,
}

impl Seam {
    /// A stitch's rest length `seconds` after the start (see the [module docs](self)).
    pub fn rest_at(&self, open_length: f32, seconds: f64) -> f32 {
        if seconds >= f64::from(self.close_seconds) {
            return 0.0;
        }
        let left = 1.0 - seconds / f64::from(self.close_seconds);
        (f64::from(open_length) * left) as f32
    }

    /// Whether the pull-in is still under way at `seconds` after the start.
    pub fn closing_at(&self, seconds: f64) -> bool {
        seconds < f64::from(self.close_seconds)
    }

    /// Checks the seam against the model's `distances`: its stitches exist and are of kind
    /// [`EdgeKind::Seam`], one length and share each, and its settings are in range.
    pub fn validate(&self, distances: &[DistanceConstraint]) -> Result<(), SimError> {
        check_settings(self.close_seconds, self.strength)?;
        let n = self.stitches.len();
        if self.open_lengths.len() != n || self.shares.len() != n {
            return Err(SimError::InvalidGeometry(
                "a seam needs one open length and one share per stitch".into(),
            ));
        }
        for &id in &self.stitches {
            match distances.get(id as usize) {
                Some(c) if c.kind == EdgeKind::Seam => {}
                _ => return Err(SimError::InvalidGeometry(format!("seam stitch {id} is not a seam constraint"))),
            }
        }
        let mut lengths = self.open_lengths.iter().chain(&self.shares);
        lengths.try_for_each(|&l| super::error::check_non_negative("seam length", l))
    }
}

/// Checks a seam's closing time (s, in [0, [`MAX_CLOSE_SECONDS`]]) and strength (N/m, in
/// (0, [`MAX_STRENGTH`]]).
pub fn check_settings(close_seconds: f32, strength: Option<f32>) -> Result<(), SimError> {
    check_range("close_time", close_seconds, 0.0, MAX_CLOSE_SECONDS, "a time in [0, 60] s")?;
    strength.map_or(Ok(()), |s| {
        check_range("strength", s, f32::MIN_POSITIVE, MAX_STRENGTH, "a force per length in (0, 1e7] N/m")
    })
}

impl Model {
    /// Sews the vertex pairs `pairs` (first run, second run) with stitches pulled shut over
    /// `close_seconds` s and breaking at `strength` N/m of seam (see [`crate::sim::sewing`]);
    /// returns the seam's index. Every index must name a particle, and the two of a pair must
    /// differ and not be corners of one triangle (the stitch would collapse it).
    pub fn add_seam(&mut self, pairs: &[[u32; 2]], close_seconds: f32, strength: Option<f32>) -> Result<u32, SimError> {
        check_settings(close_seconds, strength)?;
        let n = self.particle_count();
        if pairs.is_empty() {
            return Err(SimError::InvalidGeometry("a seam needs at least one pair of vertices".into()));
        }
        for &[a, b] in pairs {
            for i in [a, b] {
                if i as usize >= n {
                    return Err(SimError::IndexOutOfRange {
                        what: "seam vertex",
                        index: i as usize,
                        count: n,
                    });
                }
            }
            if a == b {
                return Err(SimError::InvalidGeometry(format!("a seam cannot sew vertex {a} to itself")));
            }
        }
        let edges: std::collections::HashSet<[u32; 2]> = self
            .triangles
            .iter()
            .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
            .map(|[a, b]| [a.min(b), a.max(b)])
            .collect();
        if let Some([a, b]) = pairs.iter().find(|[a, b]| edges.contains(&[*a.min(b), *a.max(b)])) {
            return Err(SimError::InvalidGeometry(format!(
                "a seam cannot sew vertices {a} and {b}: they are corners of one triangle, which it would collapse"
            )));
        }
        let position = |i: u32| self.positions[i as usize];
        let open_lengths: Vec<f32> = pairs.iter().map(|&[a, b]| position(a).distance(position(b))).collect();
        let firsts: Vec<Vec3> = pairs.iter().map(|&[a, _]| position(a)).collect();
        let shares = stitch_shares(&firsts);
        // A seam shut at once starts at rest length 0; any other starts open.
        let starting = |open: f32| if close_seconds > 0.0 { open } else { 0.0 };
        let stitches = pairs
            .iter()
            .zip(&open_lengths)
            .map(|(&[a, b], &open)| {
                self.distances.push(DistanceConstraint {
                    a,
                    b,
                    rest: starting(open),
                    kind: EdgeKind::Seam,
                    compliance: Compliance::Fixed(0.0),
                });
                (self.distances.len() - 1) as u32
            })
            .collect();
        self.seams.push(Seam {
            stitches,
            open_lengths,
            shares,
            close_seconds,
            strength,
        });
        Ok((self.seams.len() - 1) as u32)
    }

    /// For every distance constraint, whether it is a stitch of a seam with a strength (one
    /// that can break): tethers are not measured through those (see the [module docs](self)).
    pub fn breakable_stitches(&self) -> Vec<bool> {
        let mut breakable = vec![false; self.distances.len()];
        for seam in self.seams.iter().filter(|seam| seam.strength.is_some()) {
            seam.stitches.iter().for_each(|&id| breakable[id as usize] = true);
        }
        breakable
    }
}

/// The length of seam each stitch holds: half the distances to its neighbours along the run
/// `run` (the whole distance at an end); a lone stitch holds 1 mm.
fn stitch_shares(run: &[Vec3]) -> Vec<f32> {
    let gaps: Vec<f32> = run.windows(2).map(|w| w[0].distance(w[1])).collect();
    if gaps.is_empty() {
        return vec![1e-3; run.len()];
    }
    (0..run.len())
        .map(|k| {
            let before = k.checked_sub(1).map(|j| gaps[j]);
            let after = gaps.get(k).copied();
            match (before, after) {
                (Some(x), Some(y)) => (x + y) / 2.0,
                (Some(x), None) | (None, Some(x)) => x / 2.0,
                (None, None) => unreachable!("a run of two or more has a gap at each vertex"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_points() -> Model {
        let mut model = Model::default();
        for x in [0.0, 0.3, 0.0, 0.3] {
            model.positions.push(Vec3::new(x, 0.0, 0.0));
        }
        let n = model.positions.len();
        model.lumped_area = vec![0.0; n];
        model.point_mass = vec![0.01; n];
        model.pinned = vec![false; n];
        model.material = vec![0; n];
        model
    }

    #[test]
    fn a_stitch_is_pulled_in_linearly_and_is_shut_at_the_closing_time() {
        let mut model = two_points();
        model.positions[2].z = 0.4;
        model.positions[3].z = 0.4;
        let seam = model.add_seam(&[[0, 2], [1, 3]], 2.0, None).unwrap();
        let seam = &model.seams[seam as usize];
        assert_eq!(seam.open_lengths, vec![0.4, 0.4]);
        assert!((seam.rest_at(0.4, 0.5) - 0.3).abs() < 1e-6);
        assert!((seam.rest_at(0.4, 1.5) - 0.1).abs() < 1e-6);
        assert_eq!(seam.rest_at(0.4, 2.0), 0.0);
        assert_eq!(seam.rest_at(0.4, 7.0), 0.0);
        assert!(seam.closing_at(1.99) && !seam.closing_at(2.0));
        // Each of the two stitches holds half the 0.3 m between them.
        assert_eq!(seam.shares, vec![0.15, 0.15]);
        model.validate().unwrap();
    }

    #[test]
    fn a_seam_shut_at_once_has_rest_length_zero_from_the_start() {
        let mut model = two_points();
        model.add_seam(&[[0, 1]], 0.0, None).unwrap();
        assert_eq!(model.seams[0].rest_at(0.3, 0.0), 0.0);
        assert_eq!(model.distances[model.seams[0].stitches[0] as usize].rest, 0.0);
        model.add_seam(&[[2, 3]], 0.5, None).unwrap();
        assert_eq!(model.distances[model.seams[1].stitches[0] as usize].rest, 0.3);
    }

    #[test]
    fn shares_split_the_run_between_its_stitches() {
        let run = [Vec3::ZERO, Vec3::X, Vec3::new(3.0, 0.0, 0.0)];
        assert_eq!(stitch_shares(&run), vec![0.5, 1.5, 1.0]);
    }

    #[test]
    fn bad_seams_are_refused_and_leave_the_model_alone() {
        let mut model = two_points();
        let before = model.clone();
        assert!(matches!(
            model.add_seam(&[[0, 9]], 1.0, None),
            Err(SimError::IndexOutOfRange { index: 9, count: 4, .. })
        ));
        assert!(model.add_seam(&[[1, 1]], 1.0, None).is_err());
        model.triangles.push([0, 1, 2]);
        let edge = model.add_seam(&[[2, 0]], 1.0, None);
        assert!(edge.is_err_and(|e| e.to_string().contains("one triangle")));
        model.triangles.clear();
        assert!(model.add_seam(&[], 1.0, None).is_err());
        assert!(model.add_seam(&[[0, 1]], -1.0, None).is_err());
        assert!(model.add_seam(&[[0, 1]], 1.0, Some(0.0)).is_err());
        assert!(model.add_seam(&[[0, 1]], f32::NAN, None).is_err());
        assert_eq!(model, before);
    }

    #[test]
    fn joining_models_keeps_each_seam_on_its_own_stitches() {
        let mut first = two_points();
        first.add_seam(&[[0, 1]], 1.0, None).unwrap();
        let mut second = two_points();
        second.add_seam(&[[2, 3]], 1.0, None).unwrap();
        first.append(second);
        assert_eq!(first.seams[1].stitches, vec![1]);
        let stitch = first.distances[1];
        assert_eq!((stitch.a, stitch.b, stitch.kind), (6, 7, EdgeKind::Seam));
        first.validate().unwrap();
    }
}
