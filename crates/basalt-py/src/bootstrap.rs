//! Bootstrapping bindings: a CKKS context whose evaluation keys include the bootstrapping
//! circuit's, with `bootstrap(ct)`.

use std::sync::Arc;

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, Encapsulation, config};
use basalt_ckks::encryptor;
use basalt_ckks::{Encoder, Evaluator, KeyGenerator, Parameters, SecretDistribution, SecretKey};
use num_complex::Complex64;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::ckks::PyCiphertext;
use crate::err;

/// A bootstrappable CKKS context: keys for the circuit, encoder, evaluator, bootstrapper. A
/// symbolic one (trace mode) has shape-only keys and no secret: it records the kernels of the
/// very same circuit in about a second at N = 2^16, for the simulator.
#[pyclass(module = "basalt._basalt", name = "BootstrapContext", frozen)]
pub struct PyBootstrap {
    params: Parameters,
    encoder: Encoder,
    sk: Option<SecretKey>,
    eval: Evaluator,
    bt: Arc<Bootstrapper>,
    encaps: Option<Encapsulation>,
}

fn build(
    params: Parameters,
    cfg: BootstrapConfig,
    seeded: bool,
    symbolic: bool,
) -> PyResult<PyBootstrap> {
    let (bt, sk, keys, encaps) = if symbolic {
        let bt = Arc::new(Bootstrapper::symbolic(&params, cfg).map_err(err)?);
        let encaps = match bt.config().ephemeral_h {
            None => None,
            Some(h) => Some(Encapsulation::symbolic(&params, h).map_err(err)?),
        };
        let keys = bt.symbolic_keys(seeded);
        (bt, None, keys, encaps)
    } else {
        let bt = crate::ckks::shared_circuit(&params, cfg)?;
        let sk = KeyGenerator::new(&params).gen_secret_key();
        let progress = crate::progress::PyProgress::new(None);
        let (keys, encaps) =
            bt.generate_keys_with(&sk, seeded, false, &progress).map_err(|e| progress.error(e))?;
        (bt, Some(sk), keys, encaps)
    };
    let eval = Evaluator::new(&params, keys).map_err(err)?;
    Ok(PyBootstrap { encoder: Encoder::new(&params), params, sk, eval, bt, encaps })
}

fn secret(c: &PyBootstrap) -> PyResult<&SecretKey> {
    c.sk.as_ref().ok_or_else(|| {
        err("this bootstrapping context is symbolic (trace mode): use encrypt_symbolic, and a \
             real context to encrypt or decrypt")
    })
}

#[pymethods]
impl PyBootstrap {
    /// The bootstrapping circuit of a preset that has one (`N16QP1546H192H32`, `FAB`,
    /// `OSIRIS_SET_III_BOOT`, the CraterLake chains), for `log_slots` slots (default fully
    /// packed). At N = 2^16 a real context generates several GB of keys (half with
    /// `seeded_keys`) and takes minutes; a `symbolic` one takes no time and traces. Presets
    /// estimated below 128-bit security (the CraterLake 80-bit chains…) need
    /// `allow_insecure=True`.
    #[staticmethod]
    #[pyo3(signature = (name, log_slots=None, seeded_keys=false, symbolic=false, allow_insecure=false))]
    fn preset(
        py: Python<'_>,
        name: &str,
        log_slots: Option<u32>,
        seeded_keys: bool,
        symbolic: bool,
        allow_insecure: bool,
    ) -> PyResult<PyBootstrap> {
        let params = Parameters::preset_with(name, allow_insecure).map_err(err)?;
        let cfg = config::for_preset(name, log_slots, params.log_n())
            .ok_or_else(|| err(format!("preset {name:?} has no bootstrapping circuit")))?;
        py.allow_threads(|| build(params, cfg, seeded_keys, symbolic))
    }

    /// A small, INSECURE bootstrappable context (Lattigo's chain shape on N = 2^log_n) for
    /// experiments and tests.
    #[staticmethod]
    #[pyo3(signature = (log_n=11, log_slots=None, residual_levels=2, symbolic=false))]
    fn toy_insecure(
        py: Python<'_>,
        log_n: u32,
        log_slots: Option<u32>,
        residual_levels: usize,
        symbolic: bool,
    ) -> PyResult<PyBootstrap> {
        if !(8..=14).contains(&log_n) {
            return Err(pyo3::exceptions::PyValueError::new_err("log_n must be in 8..=14"));
        }
        let (params, cfg) = toy_ring(log_n, log_slots, residual_levels);
        py.allow_threads(|| build(params, cfg, false, symbolic))
    }

    #[getter]
    fn slots(&self) -> usize {
        self.bt.slots()
    }
    /// Level of a bootstrapped ciphertext (levels left for computation).
    #[getter]
    fn output_level(&self) -> usize {
        self.bt.budget().output_level
    }
    #[getter]
    fn name(&self) -> String {
        self.params.name().to_string()
    }

    /// Encrypt a complex128 vector of at most `slots` values at `level` (default: the base
    /// level, the one that needs bootstrapping — 0 unless `q_0` is split over several primes),
    /// at the preset's scale or, if lower, the largest one the bootstrap's message ratio allows.
    #[pyo3(signature = (values, level=None))]
    fn encrypt(
        &self,
        values: PyReadonlyArray1<'_, Complex64>,
        level: Option<usize>,
    ) -> PyResult<PyCiphertext> {
        let v = values.as_slice()?;
        let sk = secret(self)?;
        let level = level.unwrap_or(self.params.base_primes() - 1);
        let pt = self.encoder.encode(v, self.bt.slots(), level, self.input_scale()).map_err(err)?;
        Ok(PyCiphertext::from(encryptor::encrypt_sk(&self.params, &pt, sk).map_err(err)?))
    }

    #[getter]
    fn symbolic(&self) -> bool {
        self.sk.is_none()
    }

    /// A shape-only ciphertext as `encrypt` would give (the circuit's slots, at the base level
    /// by default, at the input scale), for tracing a bootstrap on a symbolic context.
    #[pyo3(signature = (level=None))]
    fn encrypt_symbolic(&self, level: Option<usize>) -> PyResult<PyCiphertext> {
        if self.sk.is_some() {
            return Err(err("encrypt_symbolic needs a symbolic context (symbolic=True)"));
        }
        let level = level.unwrap_or(self.params.base_primes() - 1);
        let mut ct = basalt_ckks::Ciphertext::symbolic(&self.params, level).map_err(err)?;
        ct.set_slots(self.bt.slots());
        ct.set_scale(self.input_scale());
        Ok(PyCiphertext::from(ct))
    }

    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ct: &PyCiphertext,
    ) -> PyResult<Bound<'py, PyArray1<Complex64>>> {
        let pt = encryptor::decrypt(&self.params, ct.inner(), secret(self)?).map_err(err)?;
        Ok(self.encoder.decode(&pt).map_err(err)?.into_pyarray(py))
    }

    /// Refresh `ct` to `output_level`.
    fn bootstrap(&self, py: Python<'_>, ct: &PyCiphertext) -> PyResult<PyCiphertext> {
        let out = py
            .allow_threads(|| self.bt.bootstrap(&self.eval, self.encaps.as_ref(), ct.inner()))
            .map_err(err)?;
        Ok(PyCiphertext::from(out))
    }

    /// Product of two ciphertexts, relinearized and rescaled.
    fn mul(&self, py: Python<'_>, a: &PyCiphertext, b: &PyCiphertext) -> PyResult<PyCiphertext> {
        let out = py
            .allow_threads(|| {
                let m = self.eval.mul_relin(a.inner(), b.inner())?;
                self.eval.rescale(&m)
            })
            .map_err(err)?;
        Ok(PyCiphertext::from(out))
    }

    /// Levels per stage and what is left.
    fn levels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let b = self.bt.budget();
        let d = PyDict::new(py);
        d.set_item("coeff_to_slot", b.cts)?;
        d.set_item("eval_mod", b.evalmod)?;
        d.set_item("slot_to_coeff", b.stc)?;
        d.set_item("output_level", b.output_level)?;
        Ok(d)
    }
}

impl PyBootstrap {
    /// The preset's scale or, if lower, the largest one the bootstrap's message ratio allows.
    fn input_scale(&self) -> f64 {
        self.params.default_scale().min(self.bt.max_input_scale())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBootstrap>()?;
    Ok(())
}

/// The toy bootstrappable ring of `toy_insecure` (Lattigo's chain shape on N = 2^`log_n`, a
/// weight-64 secret, 3 CoeffsToSlots and 2 SlotsToCoeffs levels): one definition for the
/// bootstrapping context and the CKKS client, so the two toys are the same ring.
pub(crate) fn toy_ring(
    log_n: u32,
    log_slots: Option<u32>,
    residual_levels: usize,
) -> (Parameters, BootstrapConfig) {
    let params = basalt_circuits::testing::toy_bootstrap_params(
        log_n,
        residual_levels,
        2,
        3,
        SecretDistribution::Hamming { h: 64 },
    );
    let cfg = BootstrapConfig {
        cts_levels: 3,
        stc_levels: 2,
        ..BootstrapConfig::lattigo_default(log_slots.unwrap_or(log_n - 1))
    };
    (params, cfg)
}
