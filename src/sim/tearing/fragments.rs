//! No confetti: a tear may not cut off a scrap (docs/physics.md §8).
//!
//! A split only changes which triangles meet at the split vertex, so every piece it could cut
//! off contains triangles of one of its fan groups. Since the mesh stays manifold (bow ties are
//! separated after every split), triangles belong to one piece exactly when they are joined
//! edge to edge; a region held to the rest by a single vertex (a one-vertex thread) is therefore
//! a piece of its own after the split, and the same count refuses it. From each group the check
//! walks edge-adjacent triangles, crossing an edge at the split vertex only within the group:
//! reaching another group's triangle means nothing is cut off; running out of triangles before
//! [`MIN_FRAGMENT_TRIANGLES`] means the split would shed a fragment, and it is not made.
//!
//! The piece the hand holds (the soft grab's triangle, or a triangle of the hard grab's
//! particle) must have [`MIN_HELD_FRAGMENT_TRIANGLES`]: a grab is a point load, whose stress
//! falls off as 1/r, so the cloth next to it is always the most strained and would otherwise
//! be ripped out as soon as the piece reached 8 triangles, ending the crack (the steady corner
//! drag: an 11-edge crack, then the corner off in the hand). The walk therefore goes on to 32
//! triangles, still a few dozen visits.

use super::TearEditor;

/// Fewest triangles a piece cut off by a tear may have. Smaller scraps (a grabbed vertex with
/// its two or three triangles, a corner sliver) fly about as confetti.
pub const MIN_FRAGMENT_TRIANGLES: usize = 8;

/// Fewest triangles a piece cut off by a tear may have when the hand holds it. The grab pulls
/// on one triangle, so the cloth right around it is always the most strained: without this
/// bound the hand rips out the first piece big enough to be allowed (8 triangles) instead of
/// the crack running on, and a flick throws that piece metres.
pub const MIN_HELD_FRAGMENT_TRIANGLES: usize = 32;

impl TearEditor<'_> {
    /// Whether splitting vertex `v` into the fan `groups` would leave a piece of fewer than
    /// [`MIN_FRAGMENT_TRIANGLES`] triangles.
    pub(super) fn sheds_fragment(&self, v: u32, groups: &[Vec<u32>]) -> bool {
        (0..groups.len()).any(|g| self.piece_is_small(v, groups, g))
    }

    /// Whether the triangles reachable from fan group `group` of `v` reach neither another
    /// group nor a pin and number fewer than [`MIN_FRAGMENT_TRIANGLES`], or fewer than
    /// [`MIN_HELD_FRAGMENT_TRIANGLES`] with the grab among them.
    fn piece_is_small(&self, v: u32, groups: &[Vec<u32>], group: usize) -> bool {
        let in_other_group = |t: u32| groups.iter().enumerate().any(|(h, g)| h != group && g.contains(&t));
        let mut reached: Vec<u32> = groups[group].clone();
        if reached.iter().any(|&t| self.is_on_a_pin(t, v, group)) {
            return false;
        }
        let mut stack = reached.clone();
        while let Some(t) = stack.pop() {
            if reached.len() >= MIN_HELD_FRAGMENT_TRIANGLES {
                return false;
            }
            for next in self.edge_neighbours(t) {
                if reached.contains(&next) {
                    continue;
                }
                if in_other_group(next) {
                    if self.meet_at(v, t, next) {
                        continue; // the split separates them
                    }
                    return false; // joined to another group away from the split
                }
                if self.is_on_a_pin(next, v, group) {
                    return false; // a shred left on a pin does not fly about
                }
                reached.push(next);
                stack.push(next);
            }
        }
        reached.len() < MIN_FRAGMENT_TRIANGLES || reached.iter().any(|&t| self.holds_the_grab(t, v, group))
    }

    /// Whether triangle `t`, on the side of fan group `group` of split vertex `v`, is held by
    /// the hand: it is the soft grab's triangle, or it keeps the hard grab's particle (a held
    /// `v` stays held in the first group only).
    fn holds_the_grab(&self, t: u32, v: u32, group: usize) -> bool {
        match self.grab {
            Some(g) => match g.point {
                Some(hit) => hit.triangle == t,
                None => self.model.triangles[t as usize].contains(&g.particle) && (g.particle != v || group == 0),
            },
            None => false,
        }
    }

    /// Whether triangle `t`, on the side of fan group `group` of split vertex `v`, keeps a
    /// pinned corner: a pinned `v` stays pinned only in the first group (the copies are free).
    fn is_on_a_pin(&self, t: u32, v: u32, group: usize) -> bool {
        let stays_pinned = |i: u32| self.particles.pinned[i as usize] && (i != v || group == 0);
        self.model.triangles[t as usize].into_iter().any(stays_pinned)
    }

    /// Whether edge-adjacent triangles `t` and `next` meet along an edge through `v` (the split
    /// separates such a pair when they lie in different groups).
    fn meet_at(&self, v: u32, t: u32, next: u32) -> bool {
        let (a, b) = (self.model.triangles[t as usize], self.model.triangles[next as usize]);
        a.iter().filter(|x| b.contains(x)).any(|&x| x == v)
    }

    /// Triangles sharing an edge with triangle `t`.
    fn edge_neighbours(&self, t: u32) -> Vec<u32> {
        let tri = self.model.triangles[t as usize];
        let mut out = Vec::with_capacity(3);
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            out.extend(
                self.topology().vertex_triangles[a as usize]
                    .iter()
                    .copied()
                    .filter(|&u| u != t && self.model.triangles[u as usize].contains(&b)),
            );
        }
        out
    }
}
