//! NTT-friendly primes: `p ≡ 1 (mod 2n)` so that `Z_p` holds the primitive `2n`-th roots of unity
//! the negacyclic NTT needs.
//!
//! Two generators, matching what the papers' parameter sets use: [`ntt_primes`] walks outward from
//! `2^bits`, alternating above and below (Lattigo's generator; it keeps the product of the chain
//! close to `2^(bits·count)`, which keeps CKKS scales stable), and [`ntt_primes_below`] walks down
//! from `2^bits` (SEAL's `CoeffModulus::Create`, used by the HE-MxV parameter sets).

use crate::MathError;
use crate::modular::Modulus;

/// Deterministic Miller–Rabin for 64-bit integers (the first 12 primes as bases suffice below
/// 3.3·10^24).
pub fn is_prime(x: u64) -> bool {
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if x < 2 {
        return false;
    }
    for &p in &BASES {
        if x.is_multiple_of(p) {
            return x == p;
        }
    }
    let d_shift = (x - 1).trailing_zeros();
    let d = (x - 1) >> d_shift;
    let mulmod = |a: u64, b: u64| (a as u128 * b as u128 % x as u128) as u64;
    let powmod = |mut a: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mulmod(r, a);
            }
            a = mulmod(a, a);
            e >>= 1;
        }
        r
    };
    'witness: for &a in &BASES {
        let mut y = powmod(a, d);
        if y == 1 || y == x - 1 {
            continue;
        }
        for _ in 1..d_shift {
            y = mulmod(y, y);
            if y == x - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

fn check(bits: u32, log_n: u32) -> Result<u64, MathError> {
    if !(20..=61).contains(&bits) {
        return Err(MathError::UnsupportedPrimeBits(bits));
    }
    if !(1..=17).contains(&log_n) {
        return Err(MathError::UnsupportedDegree(log_n));
    }
    Ok(1u64 << (log_n + 1))
}

/// `count` primes `p ≡ 1 (mod 2^(log_n+1))` closest to `2^bits`, alternating above and below it
/// (so a "60-bit" prime may exceed `2^60` slightly, as in Lattigo), all within
/// `(2^(bits-1), 1.5·2^bits)`, skipping `exclude`.
///
/// # Errors
/// [`MathError::NotEnoughPrimes`] when the range runs dry (small `bits` with large `n`).
pub fn ntt_primes(
    bits: u32,
    log_n: u32,
    count: usize,
    exclude: &[u64],
) -> Result<Vec<u64>, MathError> {
    let m = check(bits, log_n)?;
    let center = 1u64 << bits;
    let (lo_end, hi_end) = (center >> 1, (center + (center >> 1)).min(1 << 62));
    let mut up = center + 1; // first candidate ≡ 1 mod m above 2^bits
    let mut down = center - m + 1; // first candidate ≡ 1 mod m below 2^bits
    let mut out = Vec::with_capacity(count);
    let mut take_up = true;
    while out.len() < count {
        let up_ok = up < hi_end;
        let down_ok = down > lo_end;
        if !up_ok && !down_ok {
            return Err(MathError::NotEnoughPrimes {
                bits,
                log_n,
                wanted: count,
                found: out.len(),
            });
        }
        let candidate = if (take_up && up_ok) || !down_ok {
            let c = up;
            up += m;
            c
        } else {
            let c = down;
            down -= m;
            c
        };
        if is_prime(candidate) && !exclude.contains(&candidate) && !out.contains(&candidate) {
            out.push(candidate);
            take_up = !take_up;
        }
    }
    Ok(out)
}

/// `count` primes `p ≡ 1 (mod 2^(log_n+1))` strictly below `2^bits` and at least `2^(bits-1)`,
/// in descending order, skipping `exclude`.
pub fn ntt_primes_below(
    bits: u32,
    log_n: u32,
    count: usize,
    exclude: &[u64],
) -> Result<Vec<u64>, MathError> {
    let m = check(bits, log_n)?;
    let lo_end = 1u64 << (bits - 1);
    let mut c = (1u64 << bits) - m + 1;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        if c <= lo_end {
            return Err(MathError::NotEnoughPrimes {
                bits,
                log_n,
                wanted: count,
                found: out.len(),
            });
        }
        if is_prime(c) && !exclude.contains(&c) {
            out.push(c);
        }
        c -= m;
    }
    Ok(out)
}

/// True when `q` is a prime with `q ≡ 1 (mod 2n)` and fits a [`Modulus`].
pub fn is_ntt_prime(q: u64, n: usize) -> bool {
    Modulus::new(q).is_ok() && is_prime(q) && q % (2 * n as u64) == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miller_rabin_matches_trial_division() {
        for x in 0u64..20_000 {
            let naive = x >= 2 && (2..).take_while(|d| d * d <= x).all(|d| x % d != 0);
            assert_eq!(is_prime(x), naive, "{x}");
        }
        assert!(is_prime((1 << 61) - 1));
        assert!(!is_prime(((1u64 << 31) - 1) * ((1 << 31) - 1)));
        // A strong pseudoprime to bases 2..=37 except the last: 3825123056546413051.
        assert!(!is_prime(3_825_123_056_546_413_051));
    }

    #[test]
    fn generated_primes_are_ntt_friendly_distinct_and_sized() {
        for (bits, log_n) in [(28, 16), (54, 16), (60, 16), (61, 16), (40, 12), (20, 10), (36, 15)]
        {
            let ps = ntt_primes(bits, log_n, 6, &[]).unwrap();
            let n = 1usize << log_n;
            for (i, &p) in ps.iter().enumerate() {
                assert!(is_ntt_prime(p, n), "{p}");
                assert!(p.abs_diff(1 << bits) < 1 << (bits - 1));
                assert!(!ps[..i].contains(&p));
            }
            let below = ntt_primes_below(bits, log_n, 4, &ps).unwrap();
            assert!(below.windows(2).all(|w| w[0] > w[1]));
            assert!(below.iter().all(|&p| p < 1 << bits && is_ntt_prime(p, n) && !ps.contains(&p)));
        }
    }

    #[test]
    fn running_dry_is_an_error() {
        assert!(matches!(ntt_primes(20, 17, 100, &[]), Err(MathError::NotEnoughPrimes { .. })));
        assert!(matches!(ntt_primes(62, 10, 1, &[]), Err(MathError::UnsupportedPrimeBits(62))));
    }
}
