//! basalt-ckks (under construction)
