//! Subnormal numbers off while the solver runs.
//!
//! A sheet that buckles out of its plane spreads the motion to its neighbours with factors
//! below one per particle and per sweep, so the fringe of every disturbance holds coordinates,
//! velocities and corrections that shrink geometrically, through the subnormal range
//! (|x| < 1.2·10⁻³⁸) before they reach zero or the motion arrives. On x86 an operation with a
//! subnormal operand or result can take a microcode assist (on Intel cores on the order of a
//! hundred cycles): the default curtain at 128 × 128 spent half its solver time on them in its
//! first seconds of buckling (measured on an Intel Xeon). Values of that size
//! carry no physical meaning next to positions in metres (the ulp of 1 mm is 10⁻¹⁰ m), so the
//! solver threads run with flush-to-zero (subnormal results become 0) and denormals-are-zero
//! (subnormal inputs read as 0), the usual setting of physics and audio engines.
//!
//! The mode is per thread and restored when the guard drops, so code around the solver keeps
//! IEEE behaviour; every solver thread sets it, so results stay the same for every thread
//! count. Caveat: the compiler assumes IEEE subnormals, so an operation it folds at compile time
//! could round a subnormal differently from the same operation at run time; no solver constant
//! is subnormal. Other architectures keep the default mode (same results as before, slower on
//! such sheets).

/// MXCSR bit 15: flush subnormal results to zero.
#[cfg(target_arch = "x86_64")]
const FLUSH_TO_ZERO: u32 = 1 << 15;
/// MXCSR bit 6: read subnormal inputs as zero.
#[cfg(target_arch = "x86_64")]
const DENORMALS_ARE_ZERO: u32 = 1 << 6;

/// Flush-to-zero and denormals-are-zero on this thread until dropped.
pub(crate) struct FlushSubnormals {
    /// The thread's SSE control and status register before.
    #[cfg(target_arch = "x86_64")]
    saved: u32,
}

impl FlushSubnormals {
    /// Turns subnormals off on this thread.
    pub(crate) fn enable() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            let saved = read_mxcsr();
            write_mxcsr(saved | FLUSH_TO_ZERO | DENORMALS_ARE_ZERO);
            Self { saved }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Self {}
    }
}

impl Drop for FlushSubnormals {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        write_mxcsr(self.saved);
    }
}

#[cfg(target_arch = "x86_64")]
fn read_mxcsr() -> u32 {
    let mut value = 0u32;
    // SAFETY: stores the 32-bit register to a local.
    unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut value, options(nostack, preserves_flags)) };
    value
}

#[cfg(target_arch = "x86_64")]
fn write_mxcsr(value: u32) {
    // SAFETY: loads a value whose exception masks and rounding mode are the thread's own
    // (only the two subnormal bits ever differ), so no floating-point exception is unmasked.
    unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &value, options(nostack, readonly, preserves_flags)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f32::MIN_POSITIVE / 2: subnormal.
    fn halve(x: f32) -> f32 {
        std::hint::black_box(x) / 2.0
    }

    #[test]
    fn subnormals_are_flushed_inside_the_guard_and_back_after() {
        let smallest_normal = f32::MIN_POSITIVE;
        assert!(halve(smallest_normal) > 0.0, "IEEE default keeps subnormals");
        {
            let _guard = FlushSubnormals::enable();
            if cfg!(target_arch = "x86_64") {
                assert_eq!(halve(smallest_normal), 0.0, "flush to zero");
                let subnormal = std::hint::black_box(f32::from_bits(1));
                assert_eq!(subnormal * 1.0e30, 0.0, "denormals are zero");
            }
        }
        assert!(halve(smallest_normal) > 0.0, "restored after the guard");
    }
}
