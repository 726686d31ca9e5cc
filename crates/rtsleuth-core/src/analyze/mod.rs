//! Analyses
