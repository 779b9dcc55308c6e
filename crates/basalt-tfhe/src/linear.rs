//! Leveled linear layers on ciphertexts: `Σ w_i·c_i + k·Δ` with signed integer weights, the
//! dense and convolution layers of a network evaluated between bootstraps.
//!
//! # Why
//! A neuron's pre-activation is a dot product of encrypted activations with cleartext integer
//! weights; it costs only word operations (no bootstrap) and multiplies the noise standard
//! deviation by the weights' 2-norm `sqrt(Σ w_i²)` ([`crate::noise::estimate_with_norm2`]).
//! Arithmetic is modulo `q`, i.e. modulo `2p` in message units: a sum outside `[0, p)` wraps
//! into the padding half, where a LUT evaluates negacyclically (`−f(v − p)`).
//!
//! # Source
//! Chillotti, Joye, Paillier, "Programmable bootstrapping enables efficient homomorphic
//! inference of deep neural networks" (CSCML 2021), §3 (linear layers between PBS).

use crate::error::{Result, TfheError};
use crate::keys::{Ciphertext, Encoding, ServerKey};
use crate::lut::delta;
use crate::lwe::LweCiphertext;
use crate::torus::Torus;

impl<T: Torus> ServerKey<T> {
    /// `Σ weights[i]·cts[i] + constant·Δ` (`Δ = q/(2p)`); zero weights are skipped.
    pub fn dot_plain(
        &self,
        cts: &[&Ciphertext<T>],
        weights: &[i64],
        constant: i64,
    ) -> Result<Ciphertext<T>> {
        if cts.len() != weights.len() {
            return Err(TfheError::Dimension {
                what: "weights",
                expected: cts.len(),
                found: weights.len(),
            });
        }
        let dim = self.ciphertext_dimension();
        let mut acc = vec![T::ZERO; dim + 1];
        // The set's id hashes its canonical text: computed once, not per input.
        let pid = self.params.id();
        for (c, &w) in cts.iter().zip(weights) {
            crate::keys::check_ids(pid, self.key_id, c)?;
            if c.lwe.as_slice().len() != dim + 1 {
                return Err(TfheError::Dimension {
                    what: "ciphertext",
                    expected: dim,
                    found: c.lwe.dimension(),
                });
            }
            if w == 0 {
                continue;
            }
            let wt = T::from_i64(w);
            for (a, &x) in acc.iter_mut().zip(c.lwe.as_slice()) {
                *a = a.wadd(x.wmul(wt));
            }
        }
        let d: T = delta(self.params.plaintext_modulus());
        acc[dim] = acc[dim].wadd(T::from_i64(constant).wmul(d));
        Ok(Ciphertext {
            params_id: pid,
            key_id: self.key_id,
            encoding: Encoding::Integer,
            lwe: LweCiphertext::from_vec(acc),
        })
    }
}

impl<T: Torus> crate::keys::ClientKey<T> {
    /// Decrypt modulo `2p` (padding bit kept) as a signed value in `[−p, p)`: the result of a
    /// linear layer that is read without a bootstrap (a network's logits).
    pub fn decrypt_signed(&self, ct: &Ciphertext<T>) -> Result<i64> {
        let p = self.params().plaintext_modulus();
        let ph = self.phase(ct)?;
        let d: T = delta(p);
        let shift = d.to_u64().trailing_zeros();
        let v = (ph.wadd(d.shr(1)).shr(shift).to_u64() % (2 * p)) as i64;
        Ok(if v >= p as i64 { v - 2 * p as i64 } else { v })
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::ClientKey;
    use crate::params::toy;
    use crate::random::Csprng;

    #[test]
    fn dot_matches_integers_modulo_2p() {
        let params = toy::u64_small(); // p = 8
        let mut rng = Csprng::from_seed(5);
        let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng);
        let ms = [3u64, 1, 7, 0, 5];
        let cts: Vec<_> = ms.iter().map(|&m| ck.encrypt_with(m, &mut rng).unwrap()).collect();
        let refs: Vec<_> = cts.iter().collect();
        for (ws, k) in [([1i64, 2, -1, 3, 0], 2i64), ([-3, 0, 2, 1, -1], -5), ([0; 5], 7)] {
            let out = sk.dot_plain(&refs, &ws, k).unwrap();
            let want: i64 = ws.iter().zip(&ms).map(|(w, &m)| w * m as i64).sum::<i64>() + k;
            let want = (want + 8).rem_euclid(16) - 8;
            assert_eq!(ck.decrypt_signed(&out).unwrap(), want, "{ws:?}");
        }
        assert!(sk.dot_plain(&refs, &[1, 2], 0).is_err());
    }
}
