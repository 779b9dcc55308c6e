//! Rescaling and level management.

use basalt_math::rns;
use basalt_trace::{ObjectId, operation};

use super::Evaluator;
use crate::ciphertext::Ciphertext;
use crate::error::{CkksError, Result};
use crate::objects::{load, store};

impl Evaluator {
    /// Divide by the top prime (two primes with double-prime scaling) with rounding, dropping a
    /// logical level; the scale is divided by the dropped primes.
    ///
    /// # Cost
    /// Per polynomial: `c` INTT, BConv `n·c·(l+1−c)`, `l+1−c` NTT (`c` primes dropped).
    ///
    /// # Errors
    /// [`CkksError::LevelBelowZero`] if fewer than `c` primes remain above the base modulus.
    pub fn rescale(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.rescale_by(ct, self.params.primes_per_rescale())
    }

    /// Rescale by exactly `count` top primes.
    pub fn rescale_by(&self, ct: &Ciphertext, count: usize) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let limbs = ct.level() + 1;
        if count == 0 || limbs < count + self.params.base_primes() {
            return Err(CkksError::LevelBelowZero { level: ct.level(), drop: count });
        }
        let op = operation();
        load(&op, ct);
        let ring = self.params.ring();
        let dropped: f64 =
            self.params.q()[limbs - count..limbs].iter().map(|&q| q as f64).product();
        let polys = ct.polys.iter().map(|p| rns::rescale(ring, p, count)).collect();
        let out = Ciphertext {
            polys,
            scale: ct.scale / dropped,
            slots: ct.slots,
            params_id: ct.params_id,
            key_id: ct.key_id,
            object: ObjectId::fresh(),
        };
        Ok(store(&op, out))
    }

    /// Drop `levels` Q limbs without dividing (the scale is unchanged).
    pub fn drop_level(&self, ct: &Ciphertext, levels: usize) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        if levels > ct.level() {
            return Err(CkksError::LevelBelowZero { level: ct.level(), drop: levels });
        }
        // Copy only the limbs that stay.
        let keep = ct.level() - levels + 1;
        let op = operation();
        load(&op, ct);
        let polys = ct.polys.iter().map(|p| crate::util::restrict(p, keep, 0)).collect();
        let out = ct.with_polys(polys);
        Ok(store(&op, out))
    }
}
