//! The cloth's seams as it runs: their stitches pulled in frame by frame, the stitches still
//! holding and the widest gap between sewn particles ([`crate::sim::sewing`]).

use super::Cloth;

impl Cloth {
    /// Sets every closing seam's stitches to their rest length at the end of the frame of
    /// `dt` s that starts now ([`crate::sim::sewing`]). When a seam shuts in this frame the
    /// tethers are rebuilt: built while it was open, they measured through its stitches at
    /// their open lengths and hold nothing that hangs from it once it is shut.
    pub(super) fn pull_seams(&mut self, dt: f32) {
        let end = self.time + f64::from(dt);
        if self
            .model
            .seams
            .iter()
            .any(|seam| seam.closing_at(self.time) && !seam.closing_at(end))
        {
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

    /// The stitches still holding, as the particles each sews together, seam by seam
    /// ([`crate::sim::sewing`]).
    pub fn live_stitches(&self) -> impl Iterator<Item = [u32; 2]> + '_ {
        let live = |id: &&u32| self.constraints.distances().slot(**id).is_some();
        self.model.seams.iter().flat_map(move |seam| {
            seam.stitches.iter().filter(live).map(|&id| {
                let c = &self.model.distances[id as usize];
                [c.a, c.b]
            })
        })
    }

    /// The largest distance between the two particles of a stitch still holding, in m; 0
    /// without seams.
    pub fn seam_gap(&self) -> f32 {
        let position = |i: u32| self.particles.position(i as usize);
        self.live_stitches()
            .map(|[a, b]| position(a).distance(position(b)))
            .fold(0.0, f32::max)
    }
}
