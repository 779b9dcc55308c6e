//! RNS polynomials: one residue polynomial ("limb") per prime, stored limb-major.
//!
//! A polynomial lives on a prefix of the Q chain and a prefix of the special primes P:
//! limbs `0..q_limbs` are modulo `q_0..q_{q_limbs-1}`, limbs `q_limbs..` modulo
//! `p_0..p_{p_limbs-1}`. Keeping both prefixes in one buffer is what lets key switching work on
//! `Q_l ∪ P` without copies (Lattigo's `ringqp.Poly` splits them in two).
//!
//! A *symbolic* polynomial has the shape and no data: kernels applied to it record their trace
//! event and skip the arithmetic. This is Basalt's trace mode.

/// Which representation the limbs hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Domain {
    /// Coefficients.
    Coeff,
    /// Evaluations at the roots of `X^n + 1` (after the forward NTT).
    Ntt,
}

/// A polynomial in RNS form over `{q_0..q_{ql-1}} ∪ {p_0..p_{pl-1}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RnsPoly {
    n: usize,
    q_limbs: usize,
    p_limbs: usize,
    domain: Domain,
    symbolic: bool,
    data: Vec<u64>,
}

impl RnsPoly {
    /// The zero polynomial of the given shape.
    pub fn zero(n: usize, q_limbs: usize, p_limbs: usize, domain: Domain) -> RnsPoly {
        RnsPoly {
            n,
            q_limbs,
            p_limbs,
            domain,
            symbolic: false,
            data: vec![0; n * (q_limbs + p_limbs)],
        }
    }

    /// A shape-only polynomial for trace mode (see the module doc).
    pub fn symbolic(n: usize, q_limbs: usize, p_limbs: usize, domain: Domain) -> RnsPoly {
        RnsPoly { n, q_limbs, p_limbs, domain, symbolic: true, data: Vec::new() }
    }

    /// A polynomial of the same shape and kind (real or symbolic), all zero.
    pub fn zero_like(&self) -> RnsPoly {
        self.with_shape(self.q_limbs, self.p_limbs, self.domain)
    }

    /// Zero polynomial of another shape, symbolic if `self` is.
    pub fn with_shape(&self, q_limbs: usize, p_limbs: usize, domain: Domain) -> RnsPoly {
        if self.symbolic {
            RnsPoly::symbolic(self.n, q_limbs, p_limbs, domain)
        } else {
            RnsPoly::zero(self.n, q_limbs, p_limbs, domain)
        }
    }

    /// Build from raw limb-major data. Returns `None` if the length does not match the shape.
    /// Residues are *not* checked against their moduli here: use
    /// [`crate::RingContext::check_poly`] on anything read from outside.
    pub fn from_parts(
        n: usize,
        q_limbs: usize,
        p_limbs: usize,
        domain: Domain,
        data: Vec<u64>,
    ) -> Option<RnsPoly> {
        (data.len() == n * (q_limbs + p_limbs)).then_some(RnsPoly {
            n,
            q_limbs,
            p_limbs,
            domain,
            symbolic: false,
            data,
        })
    }

    pub fn is_symbolic(&self) -> bool {
        self.symbolic
    }
    pub fn n(&self) -> usize {
        self.n
    }
    pub fn q_limbs(&self) -> usize {
        self.q_limbs
    }
    pub fn p_limbs(&self) -> usize {
        self.p_limbs
    }
    pub fn limbs(&self) -> usize {
        self.q_limbs + self.p_limbs
    }
    pub fn domain(&self) -> Domain {
        self.domain
    }
    /// Relabel the domain without transforming (for data known to be in `d`, e.g. sampled
    /// uniformly, which is uniform in either domain).
    pub fn set_domain(&mut self, d: Domain) {
        self.domain = d;
    }

    pub fn limb(&self, i: usize) -> &[u64] {
        &self.data[i * self.n..(i + 1) * self.n]
    }
    pub fn limb_mut(&mut self, i: usize) -> &mut [u64] {
        &mut self.data[i * self.n..(i + 1) * self.n]
    }
    pub fn data(&self) -> &[u64] {
        &self.data
    }
    pub fn data_mut(&mut self) -> &mut [u64] {
        &mut self.data
    }
    pub fn into_data(self) -> Vec<u64> {
        self.data
    }

    /// Drop the top Q limbs, keeping the first `q_limbs` (a level drop). P limbs are kept.
    pub fn truncate_q(&mut self, q_limbs: usize) {
        assert!(q_limbs <= self.q_limbs, "truncate_q cannot add limbs");
        if !self.symbolic {
            let n = self.n;
            self.data.drain(q_limbs * n..self.q_limbs * n);
        }
        self.q_limbs = q_limbs;
    }

    /// Drop all P limbs.
    pub fn drop_p(&mut self) {
        if !self.symbolic {
            self.data.truncate(self.q_limbs * self.n);
        }
        self.p_limbs = 0;
    }

    /// Same shape (limb counts, degree, domain) as `other`.
    pub fn same_shape(&self, other: &RnsPoly) -> bool {
        self.n == other.n
            && self.q_limbs == other.q_limbs
            && self.p_limbs == other.p_limbs
            && self.domain == other.domain
    }
}
