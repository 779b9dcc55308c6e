//! Exact ModDown `Q_l ∪ P → Q_l`: `round(x / P)` with no base-conversion overshoot.
//!
//! The fast base conversion `Σ_i [x_i p̂_i^{-1}]_{p_i} p̂_i` returns `[x]_P + u·P` with an
//! overshoot `u ∈ [0, k)`. Dividing by `P` then leaves an error `−u` per coefficient that is
//! **biased** (never positive): multiplied by `s` in decryption and evaluated at the slot roots
//! near 1, the bias costs 4–8 bits of worst-slot precision after a key switch at N = 2^12…2^16
//! (measured: rotation 20.5 vs 28.6 bits fresh on Lattigo's residual set). Following HPS
//! (Halevi–Polyakov–Shoup, CT-RSA 2019, §2.4) the overshoot is computed exactly in floating
//! point, `u = ⌊Σ_i y_i / p_i⌋`, and subtracted (`u·P mod q_j`), so the result is exactly
//! `⌊(x + ⌊P/2⌋)/P⌋`. basalt-math's `rns::mod_down` has the overshoot; this is the workaround
//! until the math crate corrects it (reported to the lead).
//!
//! # Cost
//! Same kernels as `basalt_math::rns::mod_down` (and the same trace events): `k` INTT,
//! `k` Add, BConv `n·k·(l+1)`, `l+1` Sub, `l+1` NTT, `l+1` Sub, `l+1` MulScalar; plus `n·k`
//! floating-point additions for `u`, which no kernel models.

use basalt_math::{Domain, RingContext, RnsPoly};
use basalt_trace::{ElemOp, Kernel, emit, region};
use rayon::prelude::*;

/// Exact ModDown of `x` (`Q_l ∪ P`, any domain) to `Q_l` (same domain).
pub fn mod_down_exact(ring: &RingContext, x: &RnsPoly) -> RnsPoly {
    assert!(x.p_limbs() > 0, "mod_down_exact: input has no P limbs");
    let _r = region("ModDown");
    let n = ring.n();
    let (l1, k) = (x.q_limbs(), x.p_limbs());
    let ntt = x.domain() == Domain::Ntt;
    let (nk, nl) = (k as u32, l1 as u32);
    let mut out = x.with_shape(l1, 0, x.domain());
    let events = |stage: u8| match stage {
        0 => {
            if ntt {
                emit(Kernel::Intt {
                    n: n as u32,
                    limbs: nk,
                });
            }
            emit(Kernel::Elem {
                n: n as u32,
                limbs: nk,
                op: ElemOp::Add,
            });
        }
        1 => {
            emit(Kernel::BConv {
                n: n as u32,
                from: nk,
                to: nl,
            });
            emit(Kernel::Elem {
                n: n as u32,
                limbs: nl,
                op: ElemOp::Sub,
            });
            if ntt {
                emit(Kernel::Ntt {
                    n: n as u32,
                    limbs: nl,
                });
            }
            emit(Kernel::Elem {
                n: n as u32,
                limbs: nl,
                op: ElemOp::Sub,
            });
            emit(Kernel::Elem {
                n: n as u32,
                limbs: nl,
                op: ElemOp::MulScalar,
            });
        }
        _ => {}
    };
    if x.is_symbolic() {
        events(0);
        events(1);
        return out;
    }
    let ps: Vec<basalt_math::Modulus> = ring.p()[..k].to_vec();
    let qs: Vec<basalt_math::Modulus> = ring.q()[..l1].to_vec();
    // Constants: p̂_i^{-1} mod p_i, p̂_i mod q_j, P mod q_j, P^{-1} mod q_j, H = (P−1)/2.
    let prod_except = |m: &basalt_math::Modulus, skip: Option<usize>| {
        ps.iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != skip)
            .fold(1u64, |acc, (_, p)| m.mul(acc, m.reduce(p.value())))
    };
    let hat_inv: Vec<u64> = ps
        .iter()
        .enumerate()
        .map(|(i, m)| m.inv(prod_except(m, Some(i))).expect("distinct primes"))
        .collect();
    let half = |m: &basalt_math::Modulus| {
        let pm = prod_except(m, None);
        m.mul(m.sub(pm, 1), m.inv(2).expect("odd modulus"))
    };
    // 1. P limbs to the coefficient domain, + H, then y_i = [x_i·p̂_i^{-1}]_{p_i}.
    events(0);
    let mut y: Vec<Vec<u64>> = (0..k).map(|i| x.limb(l1 + i).to_vec()).collect();
    y.par_iter_mut().enumerate().for_each(|(i, limb)| {
        let m = ps[i];
        if ntt {
            ring.ntt_table(ring.max_level() + 1 + i).inverse(limb);
        }
        let h = half(&m);
        let (w, ws) = (hat_inv[i], m.shoup(hat_inv[i]));
        limb.iter_mut()
            .for_each(|v| *v = m.mul_shoup(m.add(*v, h), w, ws));
    });
    // 2. Exact overshoot u = ⌊Σ y_i / p_i⌋ per coefficient.
    let inv_p: Vec<f64> = ps.iter().map(|m| 1.0 / m.value() as f64).collect();
    let u: Vec<u64> = (0..n)
        .into_par_iter()
        .map(|t| {
            let s: f64 = (0..k).map(|i| y[i][t] as f64 * inv_p[i]).sum();
            s.floor() as u64
        })
        .collect();
    // 3. Per kept limb: t = Σ y_i p̂_i − u·P − H (= [x+H]_P − H), NTT, (x − t)·P^{-1}.
    events(1);
    out.data_mut()
        .par_chunks_mut(n)
        .enumerate()
        .for_each(|(j, o)| {
            let m = qs[j];
            let table: Vec<(u64, u64)> = (0..k)
                .map(|i| {
                    let t = prod_except(&m, Some(i));
                    (t, m.shoup(t))
                })
                .collect();
            let pm = prod_except(&m, None);
            let (pw, pws) = (pm, m.shoup(pm));
            let h = half(&m);
            for (t, o) in o.iter_mut().enumerate() {
                let mut acc = 0u64;
                for (i, &(w, ws)) in table.iter().enumerate() {
                    acc = m.add(acc, m.mul_shoup(y[i][t], w, ws));
                }
                let up = m.mul_shoup(u[t], pw, pws);
                *o = m.sub(m.sub(acc, up), h);
            }
            if ntt {
                ring.ntt_table(j).forward(o);
            }
            let pinv = m.inv(pm).expect("P invertible mod q");
            let (w, ws) = (pinv, m.shoup(pinv));
            for (o, &xv) in o.iter_mut().zip(x.limb(j)) {
                *o = m.mul_shoup(m.sub(xv, *o), w, ws);
            }
        });
    out
}
