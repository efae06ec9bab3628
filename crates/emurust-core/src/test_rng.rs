//! Tests' deterministic pseudo-random numbers (xorshift64), so that a randomised test always
//! draws the same cases.

/// A xorshift64 generator from `seed` (non-zero): each call returns the next state.
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    debug_assert_ne!(seed, 0, "xorshift64 stays at 0");
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
