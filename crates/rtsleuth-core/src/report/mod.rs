//! Reports
