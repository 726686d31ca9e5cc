//! `rtsleuth generate`: completions and man pages cover every command `--help` lists, with
//! the options each command really takes.

mod common;

use common::ok;

/// The command names of `rtsleuth --help`, from its `Commands:` section.
fn commands() -> Vec<String> {
    let help = ok(&["--help"]);
    let section = help.split("Commands:").nth(1).unwrap();
    section
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn completions_know_every_command_and_explains_options() {
    let commands = commands();
    assert!(commands.len() >= 14, "{commands:?}");
    for shell in ["bash", "zsh", "fish"] {
        let script = ok(&["generate", "completions", shell]);
        for c in &commands {
            assert!(script.contains(c.as_str()), "{shell}: no {c}");
        }
        assert!(
            script.contains("threshold"),
            "{shell}: explain's --threshold"
        );
    }
    let bash = ok(&["generate", "completions", "bash"]);
    assert!(bash.contains("complete -F _rtsleuth"), "{bash}");
}

#[test]
fn a_man_page_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    ok(&["generate", "man", out]);
    for c in std::iter::once(String::new()).chain(commands().into_iter().map(|c| format!("-{c}"))) {
        let page = dir.path().join(format!("rtsleuth{c}.1"));
        let roff =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        assert!(
            roff.contains(&format!(".TH rtsleuth{c} 1")),
            "{}",
            page.display()
        );
    }
    let explain = std::fs::read_to_string(dir.path().join("rtsleuth-explain.1")).unwrap();
    for opt in ["\\-\\-threshold", "\\-\\-top", "\\-\\-parquet"] {
        assert!(explain.contains(opt), "{opt}");
    }
}
