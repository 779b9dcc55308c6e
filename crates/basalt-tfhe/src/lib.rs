//! basalt-tfhe (under construction)
