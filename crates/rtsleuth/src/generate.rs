//! `rtsleuth generate`: shell completions and man pages made from the same clap definitions
//! the command parses with, so they cannot fall behind its options. `install.sh` installs
//! them; `dist/build.sh` ships them next to the static binaries.

use anyhow::{Context, Result};
use clap::{Args, CommandFactory, Subcommand};
use clap_complete::Shell;
use std::path::PathBuf;

#[derive(Args)]
pub struct GenerateArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    /// The completion script for SHELL, on standard output.
    Completions { shell: Shell },
    /// Man pages into DIR: rtsleuth.1 and one rtsleuth-COMMAND.1 per command.
    Man { dir: PathBuf },
}

pub fn run(args: GenerateArgs) -> Result<()> {
    let mut cmd = crate::Cli::command();
    match args.what {
        What::Completions { shell } => {
            clap_complete::generate(shell, &mut cmd, "rtsleuth", &mut std::io::stdout());
        }
        What::Man { dir } => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("writing man pages into {}", dir.display()))?;
        }
    }
    Ok(())
}
