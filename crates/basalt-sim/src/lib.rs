//! basalt-sim (under construction)
