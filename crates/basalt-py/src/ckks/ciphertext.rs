//! The CKKS ciphertext handle: opaque, carrying its level, scale, slot count and key identity.

use basalt_ckks::Ciphertext;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::err;

/// An encrypted vector (opaque; decrypt it with its context).
#[pyclass(module = "basalt._basalt", name = "CkksCiphertext", frozen)]
#[derive(Clone)]
pub struct PyCiphertext {
    ct: Ciphertext,
}

impl From<Ciphertext> for PyCiphertext {
    fn from(ct: Ciphertext) -> Self {
        PyCiphertext { ct }
    }
}

impl PyCiphertext {
    pub(crate) fn inner(&self) -> &Ciphertext {
        &self.ct
    }
}

#[pymethods]
impl PyCiphertext {
    #[getter]
    fn level(&self) -> usize {
        self.ct.level()
    }
    #[getter]
    fn scale(&self) -> f64 {
        self.ct.scale()
    }
    #[getter]
    fn slots(&self) -> usize {
        self.ct.slots()
    }
    /// The key set it is encrypted under (32 hex digits).
    #[getter]
    fn key_id(&self) -> String {
        self.ct.key_id().to_hex()
    }
    /// Serialized (checksummed, carrying the key id).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.ct.to_bytes().map_err(err)?))
    }
    fn __repr__(&self) -> String {
        format!(
            "CkksCiphertext(level={}, log2(scale)={:.2}, slots={})",
            self.ct.level(),
            self.ct.scale().log2(),
            self.ct.slots()
        )
    }
}
