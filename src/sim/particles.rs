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
#[derive(Debug, Clone, Default)]
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
        self.pos.w[i]
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

/// Positions (m) and inverse masses (1/kg) as four arrays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Positions {
    pub(crate) x: Vec<f32>,
    pub(crate) y: Vec<f32>,
    pub(crate) z: Vec<f32>,
    pub(crate) w: Vec<f32>,
}

impl Positions {
    /// Number of particles.
    pub fn len(&self) -> usize {
        self.w.len()
    }

    /// True when there are no particles.
    pub fn is_empty(&self) -> bool {
        self.w.is_empty()
    }

    /// Particle `i` as `[x, y, z, w]`.
    pub fn get(&self, i: usize) -> PosW {
        [self.x[i], self.y[i], self.z[i], self.w[i]]
    }

    /// Moves particle `i` to `p`.
    pub fn set_xyz(&mut self, i: usize, p: Vec3) {
        (self.x[i], self.y[i], self.z[i]) = (p.x, p.y, p.z);
    }

    /// Appends a particle given as `[x, y, z, w]`.
    pub fn push(&mut self, [x, y, z, w]: PosW) {
        self.x.push(x);
        self.y.push(y);
        self.z.push(z);
        self.w.push(w);
    }

    /// Every particle as `[x, y, z, w]`.
    pub fn to_vec(&self) -> Vec<PosW> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// The arrays as raw pointers for reading only (statistics).
    pub(crate) fn read_only(&self) -> PosPtr {
        PosPtr {
            x: self.x.as_ptr().cast_mut(),
            y: self.y.as_ptr().cast_mut(),
            z: self.z.as_ptr().cast_mut(),
            w: self.w.as_ptr().cast_mut(),
            comp: None,
        }
    }

    /// The arrays as raw pointers, for the solver's threads.
    pub(crate) fn raw(&mut self) -> PosPtr {
        PosPtr {
            x: self.x.as_mut_ptr(),
            y: self.y.as_mut_ptr(),
            z: self.z.as_mut_ptr(),
            w: self.w.as_mut_ptr(),
            comp: None,
        }
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
    pub(crate) x: Vec<f32>,
    pub(crate) y: Vec<f32>,
    pub(crate) z: Vec<f32>,
}

impl Vectors {
    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Vector `i`.
    pub fn get(&self, i: usize) -> Vec3 {
        Vec3::new(self.x[i], self.y[i], self.z[i])
    }

    /// Sets vector `i`.
    pub fn set(&mut self, i: usize, v: Vec3) {
        (self.x[i], self.y[i], self.z[i]) = (v.x, v.y, v.z);
    }

    /// Appends a vector.
    pub fn push(&mut self, v: Vec3) {
        self.x.push(v.x);
        self.y.push(v.y);
        self.z.push(v.z);
    }

    /// The arrays as raw pointers for reading only (constraint damping reads the start
    /// positions through these).
    pub(crate) fn read_only(&self) -> VecPtr {
        VecPtr {
            x: self.x.as_ptr().cast_mut(),
            y: self.y.as_ptr().cast_mut(),
            z: self.z.as_ptr().cast_mut(),
        }
    }

    /// The arrays as raw pointers, for the solver's threads.
    pub(crate) fn raw(&mut self) -> VecPtr {
        VecPtr {
            x: self.x.as_mut_ptr(),
            y: self.y.as_mut_ptr(),
            z: self.z.as_mut_ptr(),
        }
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
