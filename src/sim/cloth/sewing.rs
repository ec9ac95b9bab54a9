//! The cloth's seams as it runs them: the pull-in, the stitches still holding, the gap, and
//! the pairs a seam joins for self-contact ([`crate::sim::sewing`]).

use super::Cloth;
use crate::sim::model::Seam;

impl Cloth {
    /// Sets every closing seam's stitches to their rest length at the end of the frame of
    /// `dt` s that starts now ([`crate::sim::sewing`]); rebuilds the tethers when a seam shuts
    /// in this frame.
    pub(super) fn pull_seams(&mut self, dt: f32) {
        let end = self.time + f64::from(dt);
        let shutting = |seam: &&Seam| seam.closing_at(self.time) && !seam.closing_at(end);
        if self.model.seams.iter().any(|seam| shutting(&seam)) {
            // Built while the seam was open, the tethers measured through its stitches at
            // their open lengths: they would hold nothing that hangs from it once it is shut.
            self.invalidate_tethers();
        }
        let pulled: Vec<(u32, f32)> = self
            .model
            .seams
            .iter()
            .filter(|seam| seam.closing_at(self.time))
            .flat_map(|seam| {
                let rests = seam.open_lengths.iter().map(move |&open| seam.rest_at(open, end));
                seam.stitches.iter().copied().zip(rests)
            })
            .collect();
        for (id, rest) in pulled {
            self.constraints.set_distance_rest(&mut self.model, id, rest);
        }
    }

    /// The particles a stitch of a seam with a strength holds: the tethers let go of them
    /// ([`crate::sim::sewing`]), as the pass that holds tethered cloth at its pins' distances
    /// runs after the stitches in each sweep and would undo their pull on its side.
    pub(super) fn breakable_sewn_particles(&self) -> Vec<u32> {
        let breakable = self.model.seams.iter().filter(|seam| seam.strength.is_some());
        breakable.flat_map(|seam| self.seam_stitches(seam).flatten().flatten()).collect()
    }

    /// The stitches of `seam` (one of [`crate::sim::Model::seams`]) in order along it: the particles each
    /// sews together, or `None` for one that broke or was cut ([`super::sewing`]).
    pub fn seam_stitches<'a>(&'a self, seam: &'a Seam) -> impl Iterator<Item = Option<[u32; 2]>> + 'a {
        seam.stitches.iter().map(|&id| {
            let c = &self.model.distances[id as usize];
            self.constraints.distances().slot(id).map(|_| [c.a, c.b])
        })
    }

    /// The stitches still holding, seam by seam.
    pub fn live_stitches(&self) -> impl Iterator<Item = [u32; 2]> + '_ {
        self.model.seams.iter().flat_map(|seam| self.seam_stitches(seam).flatten())
    }

    /// The largest distance between the two particles of a stitch still holding, in m; 0
    /// without seams.
    pub fn seam_gap(&self) -> f32 {
        let position = |i: u32| self.particles.position(i as usize);
        self.live_stitches()
            .map(|[a, b]| position(a).distance(position(b)))
            .fold(0.0, f32::max)
    }

    /// Pairs self-contact leaves out because a seam joins them: each sewn particle with the
    /// particles its partner shares a distance constraint with. A seam joins two pieces as a
    /// shared vertex would: their edges and faces meet at the sewn point, and held a thickness
    /// apart there they would pull the seam open. Empty without seams.
    pub(super) fn joined_across_seams(&self) -> Vec<(u32, u32)> {
        let stitches: Vec<[u32; 2]> = self.live_stitches().collect();
        if stitches.is_empty() {
            return Vec::new();
        }
        let mut sewn: Vec<u32> = stitches.iter().flatten().copied().collect();
        sewn.sort_unstable();
        sewn.dedup();
        let mut neighbours: Vec<Vec<u32>> = vec![Vec::new(); sewn.len()];
        let slot = |i: u32| sewn.binary_search(&i).ok();
        for id in self.constraints.distances().live_ids() {
            let c = &self.model.distances[id as usize];
            for (from, to) in [(c.a, c.b), (c.b, c.a)] {
                if let Some(k) = slot(from) {
                    neighbours[k].push(to);
                }
            }
        }
        let of = |i: u32| slot(i).map_or(&[][..], |k| &neighbours[k][..]);
        stitches
            .iter()
            .flat_map(|&[a, b]| {
                let to_b = of(b).iter().filter(move |&&n| n != a).map(move |&n| (a, n));
                to_b.chain(of(a).iter().filter(move |&&n| n != b).map(move |&n| (b, n)))
            })
            .collect()
    }
}
