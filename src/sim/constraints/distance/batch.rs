//! The storage of distance constraints: a batch in structure-of-arrays layout.

use super::SubstepConstants;
use crate::sim::constraints::Batch;
use crate::sim::model::EdgeKind;

/// One distance constraint as handed to a batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DistanceItem {
    /// Endpoints.
    pub ends: [u32; 2],
    /// Rest length L in m.
    pub rest: f32,
    /// Effective compliance α in m/N.
    pub compliance: f32,
    /// What the edge models (statistics read the stretch edges).
    pub kind: EdgeKind,
}

#[cfg(test)]
impl DistanceItem {
    /// A stretch edge from `a` to `b` of rest length `rest` (m) and compliance `compliance`
    /// (m/N), for tests.
    pub(crate) fn stretch(a: u32, b: u32, rest: f32, compliance: f32) -> Self {
        Self {
            ends: [a, b],
            rest,
            compliance,
            kind: EdgeKind::Stretch,
        }
    }
}

/// A batch (a level or a strip) in structure-of-arrays layout, so the projection loop streams contiguous
/// arrays.
#[derive(Debug, Default, Clone)]
pub struct DistanceBatch {
    /// First endpoints.
    pub a: Vec<u32>,
    /// Second endpoints.
    pub b: Vec<u32>,
    /// Rest lengths (m).
    pub rest: Vec<f32>,
    /// Compliances α (m/N).
    pub compliance: Vec<f32>,
    /// Lagrange multipliers of the current substep (N·s²).
    pub lambda: Vec<f32>,
    /// Edge kinds.
    pub kind: Vec<EdgeKind>,
    /// Model id of each slot.
    pub id: Vec<u32>,
    /// True while every slot j joins particles `a[0] + j` and `b[0] + j` (a level along a row of
    /// a grid): the AVX2 kernel then reads no indices. Kept by `push` and `swap_remove`, so
    /// `a` and `b` must change only through them.
    contiguous: bool,
    /// Number of stretch edges (statistics skip batches without any). Kept by `push` and
    /// `swap_remove`, like `contiguous`.
    stretch_count: usize,
}

impl Batch for DistanceBatch {
    type Item = DistanceItem;

    fn particles(item: &DistanceItem) -> &[u32] {
        &item.ends
    }

    fn push(&mut self, id: u32, item: DistanceItem) {
        let [a, b] = item.ends;
        self.contiguous = match (self.a.last(), self.b.last()) {
            (Some(&last_a), Some(&last_b)) => self.contiguous && last_a.checked_add(1) == Some(a) && last_b.checked_add(1) == Some(b),
            _ => true,
        };
        self.stretch_count += usize::from(item.kind == EdgeKind::Stretch);
        self.a.push(item.ends[0]);
        self.b.push(item.ends[1]);
        self.rest.push(item.rest);
        self.compliance.push(item.compliance);
        self.lambda.push(0.0);
        self.kind.push(item.kind);
        self.id.push(id);
    }

    fn swap_remove(&mut self, index: usize) -> Option<u32> {
        // Dropping the last slot keeps a contiguous batch contiguous; moving it does not.
        self.contiguous &= index + 1 == self.a.len();
        self.stretch_count -= usize::from(self.kind[index] == EdgeKind::Stretch);
        self.a.swap_remove(index);
        self.b.swap_remove(index);
        self.rest.swap_remove(index);
        self.compliance.swap_remove(index);
        self.lambda.swap_remove(index);
        self.kind.swap_remove(index);
        self.id.swap_remove(index);
        self.id.get(index).copied()
    }

    fn get(&self, index: usize) -> DistanceItem {
        DistanceItem {
            ends: [self.a[index], self.b[index]],
            rest: self.rest[index],
            compliance: self.compliance[index],
            kind: self.kind[index],
        }
    }

    fn id(&self, index: usize) -> u32 {
        self.id[index]
    }

    /// Edge kind, then index distance |b − a| (the edge's direction on a grid): the order of
    /// the straightforward loop. Every batch thus holds one kind.
    fn phase_key(item: &DistanceItem) -> Option<u64> {
        Some(((item.kind as u64) << 32) | item.ends[0].abs_diff(item.ends[1]) as u64)
    }

    fn len(&self) -> usize {
        self.id.len()
    }
}

impl DistanceBatch {
    /// Appends a constraint with model id `id` (what the scheduler does; benches build batches
    /// with it).
    pub fn push_item(&mut self, id: u32, item: DistanceItem) {
        Batch::push(self, id, item);
    }

    /// Whether slot j joins particles `a[0] + j` and `b[0] + j` for every j.
    pub fn is_contiguous(&self) -> bool {
        self.contiguous
    }

    /// Number of stretch edges (the strain statistics skip batches without any).
    pub(crate) fn stretch_count(&self) -> usize {
        self.stretch_count
    }

    /// Whether constraint damping acts on this batch (γ = αβ/h vanishes for rigid constraints,
    /// so β leaves them bit-for-bit untouched, V8).
    pub(super) fn is_damped(&self, k: SubstepConstants) -> bool {
        k.damping_over_h > 0.0 && self.compliance.iter().any(|&alpha| alpha > 0.0)
    }
}
