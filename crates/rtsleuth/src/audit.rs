//! `rtsleuth audit`: the arguments and their wiring to `rtsleuth_live::audit`.

use crate::emit;
use anyhow::Result;
use clap::Args;
use rtsleuth_live::audit::{Audit, SystemView};
use rtsleuth_live::cpus::CpuList;
use std::path::PathBuf;

#[derive(Args)]
pub struct AuditArgs {
    /// The CPUs the measurement will run on, e.g. 2-3 (default: all online CPUs).
    #[arg(long, value_name = "LIST")]
    cpus: Option<CpuList>,
    /// Print the stable JSON document instead of the text report.
    #[arg(long)]
    json: bool,
    /// Read /proc, /sys and /boot under this directory instead (a captured tree).
    #[arg(long, hide = true, default_value = "/")]
    root: PathBuf,
}

pub fn run(args: AuditArgs) -> Result<()> {
    let audit = Audit::run(&SystemView::new(args.root), args.cpus)?;
    emit(&audit.document(), args.json, false)
}
