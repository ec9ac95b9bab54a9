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
//!
//! [`piece_labels`] finds the connected pieces of the whole cloth, as tears and cuts leave it.

use super::super::constraint_store::ConstraintStore;
use super::super::interaction::Grab;
use super::super::model::Model;
use super::topology::Mesh;

/// Fewest triangles a piece cut off by a tear may have. Smaller scraps (a grabbed vertex with
/// its two or three triangles, a corner sliver) fly about as confetti.
pub const MIN_FRAGMENT_TRIANGLES: usize = 8;

/// Fewest triangles a piece cut off by a tear may have when the hand holds it. The grab pulls
/// on one triangle, so the cloth right around it is always the most strained: without this
/// bound the hand rips out the first piece big enough to be allowed (8 triangles) instead of
/// the crack running on, and a flick throws that piece metres.
pub const MIN_HELD_FRAGMENT_TRIANGLES: usize = 32;

/// What the scrap check reads of the cloth.
#[derive(Debug, Clone, Copy)]
pub(super) struct FragmentCheck<'a> {
    /// The triangles and the fans around the vertices.
    pub mesh: Mesh<'a>,
    /// Per particle: whether it is pinned.
    pub pinned: &'a [bool],
    /// What the hand holds, if anything.
    pub grab: Option<Grab>,
}

impl FragmentCheck<'_> {
    /// Whether splitting vertex `v` into the fan `groups` would leave a piece of fewer than
    /// [`MIN_FRAGMENT_TRIANGLES`] triangles.
    pub fn sheds_fragment(&self, v: u32, groups: &[Vec<u32>]) -> bool {
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
            for next in self.mesh.edge_neighbours(t) {
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
                None => self.mesh.triangles[t as usize].contains(&g.particle) && (g.particle != v || group == 0),
            },
            None => false,
        }
    }

    /// Whether triangle `t`, on the side of fan group `group` of split vertex `v`, keeps a
    /// pinned corner: a pinned `v` stays pinned only in the first group (the copies are free).
    fn is_on_a_pin(&self, t: u32, v: u32, group: usize) -> bool {
        let stays_pinned = |i: u32| self.pinned[i as usize] && (i != v || group == 0);
        self.mesh.triangles[t as usize].into_iter().any(stays_pinned)
    }

    /// Whether edge-adjacent triangles `t` and `next` meet along an edge through `v` (the split
    /// separates such a pair when they lie in different groups).
    fn meet_at(&self, v: u32, t: u32, next: u32) -> bool {
        let (a, b) = (self.mesh.triangles[t as usize], self.mesh.triangles[next as usize]);
        a.iter().filter(|x| b.contains(x)).any(|&x| x == v)
    }
}

/// For every particle (of `particle_count`), the smallest particle index of its connected
/// piece: particles joined by `model`'s triangles or a live distance constraint.
pub(crate) fn piece_labels(particle_count: usize, model: &Model, constraints: &ConstraintStore) -> Vec<u32> {
    let sides = model.triangles.iter().flat_map(|tri| [(tri[0], tri[1]), (tri[1], tri[2])]);
    let springs = constraints.distances().live_ids().map(|id| {
        let c = model.distances[id as usize];
        (c.a, c.b)
    });
    super::super::model::joined_pieces(particle_count, sides.chain(springs))
}

#[cfg(test)]
mod tests {
    use super::super::topology::tests::hexagon;
    use super::super::topology::Mesh;
    use super::FragmentCheck;

    /// Splitting the centre of a six-triangle hexagon in two halves leaves two scraps, unless
    /// each half keeps a pin.
    #[test]
    fn a_split_sheds_a_fragment_unless_each_small_piece_keeps_a_pin() {
        let (_, triangles, fans) = hexagon();
        let mesh = Mesh {
            triangles: &triangles,
            vertex_triangles: &fans,
        };
        let halves = [vec![0, 1, 2], vec![3, 4, 5]];
        let sheds = |pinned: &[u32]| {
            let pinned: Vec<bool> = (0..7).map(|v| pinned.contains(&v)).collect();
            let check = FragmentCheck {
                mesh,
                pinned: &pinned,
                grab: None,
            };
            check.sheds_fragment(0, &halves)
        };
        assert!(sheds(&[]));
        assert!(sheds(&[2]), "the other half is still a scrap");
        assert!(!sheds(&[2, 5]));
        // A pinned split vertex stays pinned in the first group only.
        assert!(sheds(&[0]));
    }
}
