//! glibc's `rand()`: the additive feedback generator of `random_r` with its default 128-byte
//! state (TYPE_3: x[i] = x[i-3] + x[i-31] mod 2^32, output x[i] >> 1), seeded as `srand` seeds
//! it. The reference calls `rand()` once per round reset; reproducing the generator (rather
//! than injecting draws) keeps the core free of any hook in the hot path and makes a seeded
//! game here equal the reference game run after `srand(seed)` (one game per generator).

/// Degree (r) and separation (s) of glibc's TYPE_3 generator.
const DEGREE: usize = 31;
const SEPARATION: usize = 3;

/// One `srand`/`rand` stream. 31 words of state and two cursors, as in glibc's `random_data`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlibcRand {
    state: [u32; DEGREE],
    front: usize,
    rear: usize,
}

impl GlibcRand {
    /// The stream `srand(seed)` starts (seed 0 is taken as 1, as glibc does). An unseeded
    /// process behaves as `srand(1)`.
    pub fn new(seed: u32) -> Self {
        let seed = if seed == 0 { 1 } else { seed };
        let mut state = [0u32; DEGREE];
        state[0] = seed;
        // glibc: state[i] = 16807 * state[i-1] % 2147483647 (Park-Miller), in 32-bit signed
        // arithmetic via Schrage's method; a seed >= 2^31 starts negative.
        let mut word = seed as i32 as i64;
        for slot in state.iter_mut().skip(1) {
            let hi = word / 127_773;
            let lo = word % 127_773;
            word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            *slot = word as u32;
        }
        let mut rng = GlibcRand {
            state,
            front: SEPARATION,
            rear: 0,
        };
        // glibc discards the first 10 * 31 outputs.
        for _ in 0..10 * DEGREE {
            rng.next_u31();
        }
        rng
    }

    /// The next `rand()` value, in 0..=2^31-1.
    #[inline]
    pub fn next_u31(&mut self) -> u32 {
        let value = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = value;
        self.front = if self.front + 1 == DEGREE {
            0
        } else {
            self.front + 1
        };
        self.rear = if self.rear + 1 == DEGREE {
            0
        } else {
            self.rear + 1
        };
        value >> 1
    }
}

#[cfg(test)]
mod tests {
    use super::GlibcRand;

    #[test]
    fn matches_glibc_srand_1() {
        // `srand(1); rand()` x5 on glibc (the values of an unseeded C program).
        let mut r = GlibcRand::new(1);
        let got: Vec<u32> = (0..5).map(|_| r.next_u31()).collect();
        assert_eq!(
            got,
            [1804289383, 846930886, 1681692777, 1714636915, 1957747793]
        );
    }

    #[test]
    fn seed_zero_is_seed_one() {
        assert_eq!(GlibcRand::new(0), GlibcRand::new(1));
    }

    #[test]
    fn matches_glibc_srand_42_and_a_seed_above_2_pow_31() {
        // glibc: srand(42); rand() -> 71876166, 708592740, 1483128881
        let mut r = GlibcRand::new(42);
        assert_eq!(
            [r.next_u31(), r.next_u31(), r.next_u31()],
            [71876166, 708592740, 1483128881]
        );
        // srand(4000000000): the seed is negative as glibc's int32 (Schrage's method must
        // truncate toward zero, as C division does).
        let mut big = GlibcRand::new(4_000_000_000);
        assert_eq!(
            [big.next_u31(), big.next_u31(), big.next_u31()],
            [1111130805, 1380198982, 1306113867]
        );
    }
}
