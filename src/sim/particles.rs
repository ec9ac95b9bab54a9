//! Particle state in structure-of-arrays form.
//!
//! Positions and inverse masses are four arrays (x, y, z, w): eight consecutive particles are
//! one 32-byte load per coordinate, so a batch of constraints between consecutive particles (a
//! row of a grid) is projected with plain vector loads and stores, no shuffles. The other
//! quantities live in their own arrays and are touched only by the per-particle passes; the
//! substep start positions and velocities are three arrays each ([`Vectors`]), so those passes
//! run eight particles per vector too.

use glam::Vec3;

/// Particle data as the solver reads it: x, y, z in m and inverse mass in 1/kg.
pub type PosW = [f32; 4];

/// The particles of a cloth.
#[derive(Debug, Clone)]
pub struct Particles {
    /// Position (m) and inverse mass (1/kg; 0 while pinned or held).
    pub(crate) pos: Positions,
    /// Position at the start of the current substep (m).
    pub(crate) prev: Vectors,
    /// Velocity in m/s.
    pub(crate) vel: Vectors,
    /// Compensation of the position (m): the exact position is `pos + comp`, with |comp| a
    /// few units in the last place of `pos` at most (each prediction folds it back in).
    /// Substep moves below an f32 ulp of the position still add up here (see
    /// [`crate::sim::solver`]'s compensated prediction, and [`COMPENSATED_BELOW_SUBSTEP`] for
    /// the constraint corrections).
    pub(crate) comp: Vectors,
    /// `comp` at the start of the current substep.
    pub(crate) comp_prev: Vectors,
    /// Area lumped to the particle (m²); mass = area · ρ_A + point mass.
    pub(crate) area: Vec<f32>,
    /// Extra mass in kg.
    pub(crate) point_mass: Vec<f32>,
    /// Permanently pinned (until toggled).
    pub(crate) pinned: Vec<bool>,
}

impl Default for Particles {
    /// No particles; the five streamed structures place their sixteen arrays at sixteen
    /// different offsets in a page (see [`Columns`]).
    fn default() -> Self {
        Self {
            pos: Positions {
                columns: Columns::skewed(0),
            },
            prev: Vectors {
                columns: Columns::skewed(4),
            },
            vel: Vectors {
                columns: Columns::skewed(7),
            },
            comp: Vectors {
                columns: Columns::skewed(10),
            },
            comp_prev: Vectors {
                columns: Columns::skewed(13),
            },
            area: Vec::new(),
            point_mass: Vec::new(),
            pinned: Vec::new(),
        }
    }
}

impl Particles {
    /// Number of particles.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// True when there are no particles.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Position of particle `i` in m.
    pub fn position(&self, i: usize) -> Vec3 {
        xyz(self.pos.get(i))
    }

    /// Velocity of particle `i` in m/s.
    pub fn velocity(&self, i: usize) -> Vec3 {
        self.vel.get(i)
    }

    /// Inverse mass of particle `i` as the solver uses it (0 when pinned or held).
    pub fn inverse_mass(&self, i: usize) -> f32 {
        self.pos.get(i)[3]
    }

    /// Mass of particle `i` in kg for areal density `density` (kg/m²).
    pub fn mass(&self, i: usize, density: f32) -> f32 {
        self.area[i] * density + self.point_mass[i]
    }

    /// Whether particle `i` is pinned.
    pub fn is_pinned(&self, i: usize) -> bool {
        self.pinned[i]
    }

    /// Iterator over all positions.
    pub fn positions(&self) -> impl ExactSizeIterator<Item = Vec3> + '_ {
        (0..self.pos.len()).map(|i| xyz(self.pos.get(i)))
    }

    /// Moves particle `i` to exactly `p` (no compensation left).
    pub(crate) fn set_position(&mut self, i: usize, p: Vec3) {
        self.pos.set_xyz(i, p);
        self.comp.set(i, Vec3::ZERO);
    }

    /// Appends a particle (used by tearing when a vertex is split).
    pub(crate) fn push(&mut self, pos: Vec3, inv_mass: f32, vel: Vec3, area: f32, point_mass: f32, pinned: bool) -> u32 {
        self.pos.push([pos.x, pos.y, pos.z, inv_mass]);
        self.prev.push(pos);
        self.vel.push(vel);
        self.comp.push(Vec3::ZERO);
        self.comp_prev.push(Vec3::ZERO);
        self.area.push(area);
        self.point_mass.push(point_mass);
        self.pinned.push(pinned);
        (self.pos.len() - 1) as u32
    }
}

/// The xyz part of a packed particle.
pub(crate) fn xyz(p: PosW) -> Vec3 {
    Vec3::new(p[0], p[1], p[2])
}

/// Floats between the starts of consecutive particle arrays within a page: 256 bytes, a
/// sixteenth of a 4 KiB page, so the sixteen streamed arrays spread evenly over it.
const SPACING: usize = 64;

/// `N` arrays of `f32` of one length in a single allocation, array k starting k × 256 bytes
/// (plus the owner's skew) further into a page than whole capacities would put it. The
/// per-particle passes stream sixteen such arrays at once; as separate allocations of
/// 128 KiB or more each would be its own page-aligned mapping, all starting at the same
/// offset in a page: the same L1 sets, and loads that falsely wait on stores to another
/// array 4 KiB away (the 256² tmp15 prediction pass ran 45 % slower for it,
/// docs/performance.md). Spread evenly, the arrays use different sets and sit 256 bytes
/// apart modulo a page, further than a pass reads ahead.
///
/// Invariant: `data` is empty (capacity 0) or holds `skew + N * stride` floats, with
/// `len <= capacity < stride`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Columns<const N: usize> {
    data: Vec<f32>,
    len: usize,
    /// Elements each array has room for.
    capacity: usize,
    /// Floats from one array's start to the next's: the capacity, an eighth more (so the
    /// arrays also fall on different sets of a larger cache, whose period is a power of two
    /// above a page) and [`SPACING`].
    stride: usize,
    /// Floats before the first array (the owner's place among the particle arrays).
    skew: usize,
}

impl<const N: usize> Columns<N> {
    /// No elements yet; the first array will start `steps` × [`SPACING`] floats into the
    /// allocation.
    pub(crate) fn skewed(steps: usize) -> Self {
        Self {
            skew: steps * SPACING,
            ..Self::default()
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Array `k` (empty before the first push allocates).
    fn column(&self, k: usize) -> &[f32] {
        if self.data.is_empty() {
            return &[];
        }
        let start = self.skew + k * self.stride;
        &self.data[start..start + self.len]
    }

    /// Array `k`, writable.
    fn column_mut(&mut self, k: usize) -> &mut [f32] {
        if self.data.is_empty() {
            return &mut [];
        }
        let (start, len) = (self.skew + k * self.stride, self.len);
        &mut self.data[start..start + len]
    }

    /// Every array, in order.
    fn columns(&self) -> [&[f32]; N] {
        std::array::from_fn(|k| self.column(k))
    }

    /// Every array's start, for reading only.
    fn read_pointers(&self) -> [*mut f32; N] {
        std::array::from_fn(|k| self.column(k).as_ptr().cast_mut())
    }

    /// Every array's start.
    fn pointers(&mut self) -> [*mut f32; N] {
        std::array::from_fn(|k| self.column_mut(k).as_mut_ptr())
    }

    /// Element `i` of every array (one bounds check: the per-element accessors run per
    /// triangle and per tether ball every frame).
    #[inline]
    fn get(&self, i: usize) -> [f32; N] {
        assert!(i < self.len, "index {i} out of range for {} elements", self.len);
        // SAFETY: i < len <= capacity < stride, so skew + k stride + i < skew + N stride, the
        // length of `data` (the type's invariant).
        std::array::from_fn(|k| unsafe { *self.data.get_unchecked(self.skew + k * self.stride + i) })
    }

    /// Sets element `i` of every array.
    #[inline]
    fn set(&mut self, i: usize, values: [f32; N]) {
        assert!(i < self.len, "index {i} out of range for {} elements", self.len);
        for (k, value) in values.into_iter().enumerate() {
            let at = self.skew + k * self.stride + i;
            // SAFETY: in bounds as in `get`.
            unsafe { *self.data.get_unchecked_mut(at) = value };
        }
    }

    /// Appends one element to every array.
    fn push(&mut self, values: [f32; N]) {
        if self.len == self.capacity {
            self.grow();
        }
        self.len += 1;
        self.set(self.len - 1, values);
    }

    /// Doubles the capacity (at least 64), moving every array to its new start.
    fn grow(&mut self) {
        let capacity = (2 * self.capacity).max(64);
        let stride = capacity + capacity / 8 + SPACING;
        let mut grown = Self {
            data: vec![0.0; self.skew + N * stride],
            len: self.len,
            capacity,
            stride,
            skew: self.skew,
        };
        for k in 0..N {
            grown.column_mut(k).copy_from_slice(self.column(k));
        }
        *self = grown;
    }
}

impl<const N: usize> PartialEq for Columns<N> {
    /// Equal lengths and values; where the arrays sit does not matter.
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && (0..N).all(|k| self.column(k) == other.column(k))
    }
}

/// Positions (m) and inverse masses (1/kg) as four arrays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Positions {
    columns: Columns<4>,
}

impl Positions {
    /// Number of particles.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// True when there are no particles.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The four arrays: x, y, z (m) and inverse masses (1/kg).
    pub(crate) fn arrays(&self) -> [&[f32]; 4] {
        self.columns.columns()
    }

    /// Array `k` (0–2: x, y, z; 3: inverse mass), writable.
    pub(crate) fn column_mut(&mut self, k: usize) -> &mut [f32] {
        self.columns.column_mut(k)
    }

    /// Particle `i` as `[x, y, z, w]`.
    #[inline]
    pub fn get(&self, i: usize) -> PosW {
        self.columns.get(i)
    }

    /// Moves particle `i` to `p`.
    pub fn set_xyz(&mut self, i: usize, p: Vec3) {
        let w = self.columns.get(i)[3];
        self.columns.set(i, [p.x, p.y, p.z, w]);
    }

    /// Appends a particle given as `[x, y, z, w]`.
    pub fn push(&mut self, p: PosW) {
        self.columns.push(p);
    }

    /// Every particle as `[x, y, z, w]`.
    pub fn to_vec(&self) -> Vec<PosW> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// The arrays as raw pointers for reading only (statistics).
    pub(crate) fn read_only(&self) -> PosPtr {
        let [x, y, z, w] = self.columns.read_pointers();
        PosPtr { x, y, z, w, comp: None }
    }

    /// The arrays as raw pointers, for the solver's threads.
    pub(crate) fn raw(&mut self) -> PosPtr {
        let [x, y, z, w] = self.columns.pointers();
        PosPtr { x, y, z, w, comp: None }
    }
}

impl From<&[PosW]> for Positions {
    fn from(particles: &[PosW]) -> Self {
        let mut positions = Self::default();
        particles.iter().for_each(|&p| positions.push(p));
        positions
    }
}

/// Substep length (s) below which the distance constraints' corrections are summed
/// compensated: the part of a correction that an f32 position cannot hold goes into the
/// particle's compensation, as the prediction's does. A pendulum's per-substep pull toward its
/// circle, (v h)²/2L, falls below a 1 m position's ulp from about 30 substeps at 60 Hz; lost,
/// it slowed a 1 m pendulum's swing by 3.7 % at 100 substeps and froze it at 1 000. Above this
/// length (the 15-substep default, the benchmark) the vector kernels run unchanged.
pub(crate) const COMPENSATED_BELOW_SUBSTEP: f32 = 1.0 / 1200.0;

/// a + b as an f32 sum and its exact rounding error (Knuth's TwoSum, for any magnitudes).
#[inline(always)]
pub(crate) fn two_sum(a: Vec3, b: Vec3) -> (Vec3, Vec3) {
    let sum = a + b;
    let virtual_b = sum - a;
    (sum, (a - (sum - virtual_b)) + (b - virtual_b))
}

/// Raw pointers to the four arrays of [`Positions`], and to the compensations when
/// constraint corrections are summed compensated ([`COMPENSATED_BELOW_SUBSTEP`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PosPtr {
    pub x: *mut f32,
    pub y: *mut f32,
    pub z: *mut f32,
    pub w: *mut f32,
    pub comp: Option<VecPtr>,
}

impl PosPtr {
    /// Particle `i` as `[x, y, z, w]`.
    ///
    /// # Safety
    /// `i` in bounds, no other thread writing particle `i`.
    #[inline(always)]
    pub unsafe fn get(self, i: usize) -> PosW {
        // SAFETY: the caller upholds this function's # Safety contract: `i` in bounds, no other
        // thread writing particle `i`.
        unsafe { [*self.x.add(i), *self.y.add(i), *self.z.add(i), *self.w.add(i)] }
    }

    /// Writes particle `i`'s position.
    ///
    /// # Safety
    /// As [`Self::get`], and no other thread reading particle `i`.
    #[inline(always)]
    pub unsafe fn set_xyz(self, i: usize, [x, y, z]: [f32; 3]) {
        // SAFETY: the caller upholds this function's # Safety contract: as `Self::get`, and no
        // other thread reading particle `i`.
        unsafe {
            (*self.x.add(i), *self.y.add(i), *self.z.add(i)) = (x, y, z);
        }
    }

    /// Moves particle `i`, now at `p`, by `delta` (m). The position becomes the f32 sum
    /// p + delta in either case; with compensation on, its rounding error is added to the
    /// particle's compensation.
    ///
    /// # Safety
    /// As [`Self::set_xyz`].
    #[inline(always)]
    pub unsafe fn shift(self, i: usize, p: PosW, delta: [f32; 3]) {
        // SAFETY: the caller upholds this function's # Safety contract: as `Self::set_xyz`.
        unsafe {
            let (moved, error) = two_sum(xyz(p), Vec3::from_array(delta));
            self.set_xyz(i, moved.to_array());
            if let Some(comp) = self.comp {
                comp.set(i, comp.get(i) + error);
            }
        }
    }

    /// These pointers with the corrections summed into `comp`.
    pub fn compensated(self, comp: VecPtr) -> Self {
        PosPtr { comp: Some(comp), ..self }
    }
}

/// Raw pointer to positions stored one `[x, y, z, w]` per particle: the solver's working copy
/// for the hinge phases, where a particle then moves with one 16-byte load and store instead of
/// four gathered and three scattered 4-byte ones.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AosPtr(pub *mut PosW);

/// Reading and writing particles by index, in either layout.
pub(crate) trait ParticleAccess: Copy {
    /// Particle `i` as `[x, y, z, w]`.
    ///
    /// # Safety
    /// `i` in bounds, no other thread writing particle `i`.
    unsafe fn get(self, i: usize) -> PosW;
    /// Writes particle `i`'s position.
    ///
    /// # Safety
    /// As [`Self::get`], and no other thread reading particle `i`.
    unsafe fn set_xyz(self, i: usize, p: [f32; 3]);
}

impl ParticleAccess for PosPtr {
    #[inline(always)]
    unsafe fn get(self, i: usize) -> PosW {
        // SAFETY: the caller upholds `ParticleAccess::get`'s contract (# Safety): `i` in bounds, no
        // other thread writing particle `i`.
        unsafe { PosPtr::get(self, i) }
    }

    #[inline(always)]
    unsafe fn set_xyz(self, i: usize, p: [f32; 3]) {
        // SAFETY: the caller upholds `ParticleAccess::set_xyz`'s contract (# Safety): as
        // `Self::get`, and no other thread reading particle `i`.
        unsafe { PosPtr::set_xyz(self, i, p) }
    }
}

impl ParticleAccess for AosPtr {
    #[inline(always)]
    unsafe fn get(self, i: usize) -> PosW {
        // SAFETY: the caller upholds `ParticleAccess::get`'s contract (# Safety): `i` in bounds, no
        // other thread writing particle `i`.
        unsafe { *self.0.add(i) }
    }

    #[inline(always)]
    unsafe fn set_xyz(self, i: usize, [x, y, z]: [f32; 3]) {
        // SAFETY: the caller upholds `ParticleAccess::set_xyz`'s contract (# Safety): as
        // `Self::get`, and no other thread reading particle `i`.
        unsafe {
            let w = (*self.0.add(i))[3];
            *self.0.add(i) = [x, y, z, w];
        }
    }
}

/// Three-component vectors (start positions, velocities) as three arrays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Vectors {
    columns: Columns<3>,
}

impl Vectors {
    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The three arrays: x, y, z.
    pub(crate) fn arrays(&self) -> [&[f32]; 3] {
        self.columns.columns()
    }

    /// Array `k` (0–2: x, y, z), writable (tests corrupt single values through it).
    #[cfg(test)]
    pub(crate) fn column_mut(&mut self, k: usize) -> &mut [f32] {
        self.columns.column_mut(k)
    }

    /// Vector `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Vec3 {
        Vec3::from_array(self.columns.get(i))
    }

    /// Sets vector `i`.
    #[inline]
    pub fn set(&mut self, i: usize, v: Vec3) {
        self.columns.set(i, v.to_array());
    }

    /// Appends a vector.
    pub fn push(&mut self, v: Vec3) {
        self.columns.push(v.to_array());
    }

    /// The arrays as raw pointers for reading only (constraint damping reads the start
    /// positions through these).
    pub(crate) fn read_only(&self) -> VecPtr {
        let [x, y, z] = self.columns.read_pointers();
        VecPtr { x, y, z }
    }

    /// The arrays as raw pointers, for the solver's threads.
    pub(crate) fn raw(&mut self) -> VecPtr {
        let [x, y, z] = self.columns.pointers();
        VecPtr { x, y, z }
    }
}

/// The xyz parts of packed particles (tests and benches start from those).
impl From<&[PosW]> for Vectors {
    fn from(particles: &[PosW]) -> Self {
        let mut vectors = Self::default();
        particles.iter().for_each(|&p| vectors.push(xyz(p)));
        vectors
    }
}

/// Raw pointers to the three arrays of [`Vectors`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct VecPtr {
    pub x: *mut f32,
    pub y: *mut f32,
    pub z: *mut f32,
}

impl VecPtr {
    /// Vector `i`.
    ///
    /// # Safety
    /// `i` in bounds, no other thread writing vector `i`.
    #[inline(always)]
    pub unsafe fn get(self, i: usize) -> Vec3 {
        // SAFETY: the caller upholds this function's # Safety contract: `i` in bounds, no other
        // thread writing vector `i`.
        unsafe { Vec3::new(*self.x.add(i), *self.y.add(i), *self.z.add(i)) }
    }

    /// Sets vector `i`.
    ///
    /// # Safety
    /// As [`Self::get`], and no other thread reading vector `i`.
    #[inline(always)]
    pub unsafe fn set(self, i: usize, v: Vec3) {
        // SAFETY: the caller upholds this function's # Safety contract: as `Self::get`, and no
        // other thread reading vector `i`.
        unsafe {
            (*self.x.add(i), *self.y.add(i), *self.z.add(i)) = (v.x, v.y, v.z);
        }
    }
}
