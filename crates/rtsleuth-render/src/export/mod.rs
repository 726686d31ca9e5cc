//! Writers of traces other tools open, with rtsleuth's findings drawn in.

pub mod perfetto;
