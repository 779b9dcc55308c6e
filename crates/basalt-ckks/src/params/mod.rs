//! CKKS parameters: the literal (serde data), its validation, the security table and the named
//! presets. See [`Parameters::new`].

pub mod literal;
pub mod presets;
pub mod security;
pub mod validate;

pub use literal::{KeySwitchBand, ParametersLiteral, Provenance, SecretDistribution};
pub use security::SecurityEstimate;
pub use validate::{Gadget, Parameters, ParamsSummary};
