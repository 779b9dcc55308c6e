//! All the primes of one parameter set and their NTT tables.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::MathError;
use crate::modular::Modulus;
use crate::ntt::NttTable;
use crate::poly::RnsPoly;
use crate::primes::is_prime;
use crate::rns::BConv;

/// (from, to) global limb indices of a cached BConv table.
type BConvKey = (Vec<usize>, Vec<usize>);

/// The ring `Z[X]/(X^n+1)` with the Q chain `q_0..q_L` and the special primes `p_0..p_{k-1}`.
/// Build it once per parameter set and share it (`Arc<RingContext>`); it is `Send + Sync`.
#[derive(Debug)]
pub struct RingContext {
    log_n: u32,
    moduli: Vec<Modulus>,
    q_count: usize,
    ntt: Vec<NttTable>,
    /// `slot_exp[j]`: odd exponent of the root slot `j` evaluates at (same for every prime).
    slot_exp: Vec<u32>,
    /// `slot_of[(e-1)/2]`: the slot evaluating at `ψ^e`.
    slot_of: Vec<u32>,
    galois_perm: Mutex<HashMap<u64, Arc<Vec<u32>>>>,
    /// BConv tables by (from, to) global limb indices.
    pub(crate) bconv_cache: Mutex<HashMap<BConvKey, Arc<BConv>>>,
}

impl RingContext {
    /// Check the primes and build their NTT tables.
    ///
    /// # Errors
    /// Degree outside `2^4..=2^17`, an empty Q chain, a modulus out of range, not prime, not
    /// `1 mod 2n`, or repeated.
    pub fn new(log_n: u32, q: &[u64], p: &[u64]) -> Result<RingContext, MathError> {
        if !(4..=17).contains(&log_n) {
            return Err(MathError::UnsupportedDegree(log_n));
        }
        if q.is_empty() {
            return Err(MathError::EmptyChain);
        }
        let n = 1usize << log_n;
        let mut moduli = Vec::with_capacity(q.len() + p.len());
        for (i, &v) in q.iter().chain(p).enumerate() {
            let m = Modulus::new(v)?;
            if !is_prime(v) {
                return Err(MathError::NotPrime(v));
            }
            if q.iter().chain(p).take(i).any(|&w| w == v) {
                return Err(MathError::DuplicateModulus(v));
            }
            moduli.push(m);
        }
        let ntt = moduli.iter().map(|&m| NttTable::new(n, m)).collect::<Result<Vec<_>, _>>()?;
        let slot_exp = ntt[0].slot_exponents()?;
        for t in &ntt[1..] {
            // tfhe-ntt uses one slot order for every prime; automorphisms rely on it.
            assert_eq!(t.slot_exponents()?, slot_exp, "NTT slot order differs between primes");
        }
        let mut slot_of = vec![0u32; n];
        for (j, &e) in slot_exp.iter().enumerate() {
            slot_of[(e as usize - 1) / 2] = j as u32;
        }
        Ok(RingContext {
            log_n,
            moduli,
            q_count: q.len(),
            ntt,
            slot_exp,
            slot_of,
            galois_perm: Mutex::new(HashMap::new()),
            bconv_cache: Mutex::new(HashMap::new()),
        })
    }

    pub fn n(&self) -> usize {
        1 << self.log_n
    }
    pub fn log_n(&self) -> u32 {
        self.log_n
    }
    /// The Q chain `q_0..q_L`.
    pub fn q(&self) -> &[Modulus] {
        &self.moduli[..self.q_count]
    }
    /// The special primes `p_0..p_{k-1}`.
    pub fn p(&self) -> &[Modulus] {
        &self.moduli[self.q_count..]
    }
    /// Q then P.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }
    /// `L`: the index of the top Q prime.
    pub fn max_level(&self) -> usize {
        self.q_count - 1
    }
    /// NTT table of the prime with global index `g`.
    pub fn ntt_table(&self, g: usize) -> &NttTable {
        &self.ntt[g]
    }

    /// Global index (into [`RingContext::moduli`]) of limb `i` of `a`.
    #[inline]
    pub fn global_index(&self, a: &RnsPoly, i: usize) -> usize {
        if i < a.q_limbs() { i } else { self.q_count + i - a.q_limbs() }
    }

    /// Global indices of all limbs of `a`, in order.
    pub fn global_indices(&self, a: &RnsPoly) -> Vec<usize> {
        (0..a.limbs()).map(|i| self.global_index(a, i)).collect()
    }

    /// Modulus of limb `i` of `a`.
    #[inline]
    pub fn modulus_of(&self, a: &RnsPoly, i: usize) -> Modulus {
        self.moduli[self.global_index(a, i)]
    }

    /// Check a polynomial read from outside: degree, limb counts within the chain, and every
    /// residue below its modulus.
    pub fn check_poly(&self, a: &RnsPoly) -> Result<(), String> {
        if a.n() != self.n() {
            return Err(format!("degree {} does not match the ring's {}", a.n(), self.n()));
        }
        if a.q_limbs() == 0 || a.q_limbs() > self.q_count || a.p_limbs() > self.p().len() {
            return Err(format!(
                "limb counts q={} p={} exceed the chain (q={}, p={})",
                a.q_limbs(),
                a.p_limbs(),
                self.q_count,
                self.p().len()
            ));
        }
        if a.is_symbolic() {
            return Ok(());
        }
        for i in 0..a.limbs() {
            let q = self.modulus_of(a, i).value();
            if let Some(j) = a.limb(i).iter().position(|&v| v >= q) {
                return Err(format!("residue {} of limb {i} is not reduced modulo {q}", j));
            }
        }
        Ok(())
    }

    /// Slot permutation of the automorphism `X -> X^galois` in the evaluation domain:
    /// `out[j] = in[perm[j]]`. Cached per Galois element.
    pub fn galois_permutation(&self, galois: u64) -> Arc<Vec<u32>> {
        let mut cache = self.galois_perm.lock().expect("galois cache poisoned");
        cache
            .entry(galois)
            .or_insert_with(|| {
                let two_n = 2 * self.n() as u64;
                let perm = self
                    .slot_exp
                    .iter()
                    .map(|&e| {
                        let t = (e as u64 * galois) % two_n;
                        self.slot_of[(t as usize - 1) / 2]
                    })
                    .collect();
                Arc::new(perm)
            })
            .clone()
    }

    /// Galois element of a rotation by `k` slots: `5^k mod 2n` (negative `k` rotates right).
    pub fn galois_element_for_rotation(&self, k: i64) -> u64 {
        let two_n = 2 * self.n() as u64;
        let order = self.n() as i64 / 2; // 5 generates a cyclic group of order n/2
        let e = k.rem_euclid(order) as u64;
        let m = Modulus::new(two_n).expect("2n is a valid modulus");
        m.pow(5, e)
    }

    /// Galois element of complex conjugation: `2n - 1` (i.e. `X -> X^{-1}`).
    pub fn galois_element_conjugate(&self) -> u64 {
        2 * self.n() as u64 - 1
    }
}
