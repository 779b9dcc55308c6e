//! Encrypted matrix–vector products for Python: `basalt_circuits::lintrans` (diagonal method,
//! BSGS with no / single / double hoisting, Lattigo's or Osiris' giant-step-centric loop order,
//! OF-Limb or stored diagonals) behind a CKKS context.

use std::collections::BTreeMap;

use basalt_circuits::lintrans::{Diagonals, GscOrder, Hoisting, LinearTransform, Strategy};
use num_complex::Complex64;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

use crate::ckks::{PyCiphertext, PyServer};
use crate::err;

/// `M·x` for ciphertexts of one context: the diagonals encoded at one level, the plan
/// resolved (its `n1`, its rotations). Apply it with the context that holds its keys.
#[pyclass(module = "basalt._basalt", name = "LinearTransform", frozen)]
pub struct PyLinearTransform {
    lt: LinearTransform,
    /// The parameter set its diagonals are encoded for.
    params_id: u64,
}

#[pymethods]
impl PyLinearTransform {
    /// Rotation steps whose keys `apply` needs.
    #[getter]
    fn rotations(&self) -> Vec<i64> {
        self.lt.rotations()
    }
    /// The level the input must be at (the output is one level lower, rescaled).
    #[getter]
    fn level(&self) -> usize {
        self.lt.level()
    }
    /// Baby steps of the resolved plan (the slot count for the diagonal method).
    #[getter]
    fn n1(&self) -> usize {
        self.lt.plan().n1
    }
    /// Giant steps of the resolved plan.
    #[getter]
    fn n2(&self) -> usize {
        self.lt.split_n2()
    }
    /// The closed-form operation counts of one application (rotations, key switches, NTT
    /// limbs, modular multiplications, plaintext and key bytes).
    fn predicted_cost(&self) -> BTreeMap<&'static str, u64> {
        let c = self.lt.predicted_cost();
        BTreeMap::from([
            ("rotations", c.rotations),
            ("key_switches", c.key_switches),
            ("ntt_limbs", c.ntt_limbs),
            ("modmults", c.modmults),
            ("plaintext_bytes", c.plaintext_bytes),
            ("key_bytes", c.key_bytes),
        ])
    }
    fn __repr__(&self) -> String {
        let p = self.lt.plan();
        format!(
            "LinearTransform(level={}, n1={}, n2={}, hoisting={:?}, order={:?})",
            self.lt.level(),
            p.n1,
            self.lt.split_n2(),
            p.hoisting,
            p.order
        )
    }
}

/// The strategy the Python keywords name; `n1 = None` asks for the library's plan of fewest
/// modular multiplications (Osiris' rule: at most `max_partials` giant steps, GSC, OF-Limb).
fn strategy(
    n1: Option<usize>,
    hoisting: &str,
    order: &str,
    max_partials: usize,
    of_limb: bool,
) -> PyResult<Strategy> {
    let hoisting: Hoisting = hoisting.parse().map_err(err)?;
    let order = match order {
        "baby-step" => GscOrder::BabyStepCentric,
        "giant-step" => GscOrder::GiantStepCentric { max_partials, of_limb },
        o => return Err(err(format!("order must be baby-step or giant-step, not {o:?}"))),
    };
    Ok(match n1 {
        None => Strategy::Auto { max_partials },
        Some(n1) => Strategy::Bsgs { n1, hoisting, order },
    })
}

/// Encode `diagonals` (`{k: d_k}`, `d_k[i] = M[i][(i + k) mod slots]`) over `slots` slots at
/// `level` (default: the top) for the parameters of `ctx` (a client's evaluator or a server),
/// with the plan the keywords name.
#[pyfunction]
#[pyo3(signature = (ctx, diagonals, slots, level=None, n1=None, hoisting="double", order="baby-step", max_partials=4, of_limb=true))]
#[allow(clippy::too_many_arguments)]
fn linear_transform(
    py: Python<'_>,
    ctx: &PyServer,
    diagonals: BTreeMap<i64, PyReadonlyArray1<'_, Complex64>>,
    slots: usize,
    level: Option<usize>,
    n1: Option<usize>,
    hoisting: &str,
    order: &str,
    max_partials: usize,
    of_limb: bool,
) -> PyResult<PyLinearTransform> {
    let s = strategy(n1, hoisting, order, max_partials, of_limb)?;
    let map = diagonals
        .into_iter()
        .map(|(k, v)| Ok((k, v.as_slice().map_err(err)?.to_vec())))
        .collect::<PyResult<BTreeMap<_, _>>>()?;
    let diags = Diagonals::from_map(slots, map).map_err(err)?;
    let level = level.unwrap_or(ctx.params.max_level());
    let params = &ctx.params;
    let lt = py.allow_threads(|| LinearTransform::new(params, diags, s, level)).map_err(err)?;
    Ok(PyLinearTransform { lt, params_id: params.id() })
}

/// `lt` applied to `ct` with the evaluator (and keys) of `ctx`, a client's or a server's,
/// rescaled; a transform encoded for another parameter set is refused.
#[pyfunction]
fn linear_transform_apply(
    py: Python<'_>,
    ctx: &PyServer,
    lt: &PyLinearTransform,
    ct: &PyCiphertext,
) -> PyResult<PyCiphertext> {
    if lt.params_id != ctx.params.id() {
        return Err(err("this transform is encoded for another parameter set"));
    }
    let out = py.allow_threads(|| lt.lt.evaluate(&ctx.eval, ct.inner())).map_err(err)?;
    Ok(out.into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLinearTransform>()?;
    m.add_function(wrap_pyfunction!(linear_transform, m)?)?;
    m.add_function(wrap_pyfunction!(linear_transform_apply, m)?)?;
    Ok(())
}
