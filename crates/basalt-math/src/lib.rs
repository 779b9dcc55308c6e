//! basalt-math (under construction)
