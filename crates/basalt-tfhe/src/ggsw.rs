//! GGSW ciphertexts `Z + m·G` (rows = GLWE encryptions of zero plus the gadget), in the
//! standard domain (for tests) and their Fourier form (what the bootstrapping key stores).

use serde::{Deserialize, Serialize};
use tfhe_fft::c64;

use crate::fft::NegacyclicFft;
use crate::glwe::{GlweCiphertext, GlweSecretKey};
use crate::params::NoiseDistribution;
use crate::random::Csprng;
use crate::torus::Torus;

/// GGSW ciphertext: `(k+1)·l` GLWE rows; row `r = c·l + (j-1)` encrypts zero with `m·q/B^j`
/// added to polynomial `c` (mask `c < k`, body `c = k`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct GgswCiphertext<T: Torus> {
    pub(crate) base_log: u32,
    pub(crate) level: usize,
    pub(crate) rows: Vec<GlweCiphertext<T>>,
}

impl<T: Torus> GgswCiphertext<T> {
    /// Encrypt the small integer `m` (a key bit for the bootstrapping key).
    pub fn encrypt(
        sk: &GlweSecretKey<T>,
        m: i64,
        base_log: u32,
        level: usize,
        noise: NoiseDistribution,
        rng: &mut Csprng,
    ) -> Self {
        let (k, n) = (sk.k, sk.n);
        let zero = vec![T::ZERO; n];
        let mut rows = Vec::with_capacity((k + 1) * level);
        for c in 0..=k {
            for j in 1..=level {
                let mut row = sk.encrypt(&zero, noise, rng);
                let g = T::ONE.shl(T::BITS - j as u32 * base_log);
                let idx = c * n;
                row.data[idx] = row.data[idx].wadd(T::from_i64(m).wmul(g));
                rows.push(row);
            }
        }
        GgswCiphertext { base_log, level, rows }
    }

    pub fn rows(&self) -> &[GlweCiphertext<T>] {
        &self.rows
    }

    /// Fourier form: `(k+1)·l` rows × `(k+1)` columns × `N/2` complex values, row-major,
    /// the layout [`crate::external_product`] reads.
    pub fn to_fourier(&self, fft: &NegacyclicFft, out: &mut [c64]) {
        let n = fft.poly_size();
        let m = n / 2;
        let mut buf = fft.new_scratch();
        let stack = dyn_stack::PodStack::new(&mut buf);
        let mut o = 0;
        for row in &self.rows {
            for c in 0..=row.k {
                fft.forward(&mut out[o..o + m], &row.data[c * n..(c + 1) * n], stack);
                o += m;
            }
        }
    }
}
