//! `tracegen`: write a synthetic ftrace text trace (and its ground truth), or
//! grow a real trace to a target size.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use rtsleuth_tracegen::{
    expected_to_json, generate_to, replicate, write_compact, CompactSpec, Scenario, Variant,
};

const USAGE: &str = "\
usage:
  tracegen [--variant V] [--cpus N] [--wakeups N] [--seed S] [--size SIZE]
           [--expected FILE.json] [--no-waking] [--lost] [--buffer-started]
           [--elided] [--no-trailing-newline] [--no-noise] [--overlong-comms]
           [--spaced-comms] [--empty-cpu] [--start-us US] [--max-samples N] [--trace-cmd-version 6|7]
           [-o OUT]
  tracegen replicate --size SIZE INPUT [-o OUT]
  tracegen perfetto-compact --events N [--cpus N] [--seed S] [--bundle-events N] -o OUT

perfetto-compact: a Perfetto protobuf trace in the shape Android phones write (per-CPU ftrace
bundles with compact_sched, interned comms and kernel symbols, other events as FtraceEvent
messages) of at least N events (K/M suffixes allowed); prints what it wrote as JSON.

variants: modern5 (default), legacy4, tgid, tgid-android, rt7, latency-format,
          trace-cmd, trace-cmd-raw, trace-pipe
SIZE: bytes with optional K/M/G suffix (powers of 1024), e.g. 100M.
With --size and no --wakeups, wake-ups continue until the size is reached.";

fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mul) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'B' => 1,
                _ => return Err(format!("bad size suffix in {s:?}")),
            };
            (&s[..i], m)
        }
        _ => (s, 1),
    };
    let n: f64 = num.parse().map_err(|_| format!("bad size {s:?}"))?;
    Ok((n * mul as f64) as u64)
}

fn num<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse().map_err(|_| format!("bad value {v:?} for {flag}"))
}

fn open_out(path: &Option<String>) -> io::Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) => Box::new(BufWriter::with_capacity(1 << 20, fs::File::create(p)?)),
        None => Box::new(BufWriter::with_capacity(1 << 20, io::stdout().lock())),
    })
}

fn real_main() -> Result<(), String> {
    let mut args = std::env::args().skip(1).peekable();
    let mut out: Option<String> = None;
    if args.peek().map(String::as_str) == Some("replicate") {
        args.next();
        let mut size = None;
        let mut input = None;
        while let Some(a) = args.next() {
            match a.as_str() {
                "--size" => size = Some(parse_size(&args.next().ok_or("--size needs a value")?)?),
                "-o" | "--output" => out = args.next(),
                "-h" | "--help" => {
                    println!("{USAGE}");
                    return Ok(());
                }
                _ if input.is_none() && !a.starts_with("--") => input = Some(a),
                _ => return Err(format!("unexpected argument {a:?}\n{USAGE}")),
            }
        }
        let input = input.ok_or(format!("replicate needs an INPUT\n{USAGE}"))?;
        let size = size.ok_or("replicate needs --size")?;
        let text = fs::read_to_string(&input).map_err(|e| format!("{input}: {e}"))?;
        let mut w = open_out(&out).map_err(|e| e.to_string())?;
        let st = replicate(&text, size, &mut w).map_err(|e| e.to_string())?;
        w.flush().map_err(|e| e.to_string())?;
        eprintln!(
            "tracegen: {} copies, {} event lines, {} bytes (shift {} ns)",
            st.copies, st.event_lines, st.bytes, st.shift_ns
        );
        return Ok(());
    }

    if args.peek().map(String::as_str) == Some("perfetto-compact") {
        args.next();
        return perfetto_compact(args);
    }

    let mut variant = Variant::Modern5;
    let mut sc_seed = 1u64;
    let mut cpus = 2u32;
    let mut wakeups: Option<u64> = None;
    let mut size: Option<u64> = None;
    let mut expected: Option<String> = None;
    let mut mods: Vec<Box<dyn Fn(Scenario) -> Scenario>> = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--variant" => variant = args.next().ok_or("--variant needs a value")?.parse()?,
            "--cpus" => cpus = num("--cpus", args.next())?,
            "--wakeups" => wakeups = Some(num("--wakeups", args.next())?),
            "--seed" => sc_seed = num("--seed", args.next())?,
            "--size" => size = Some(parse_size(&args.next().ok_or("--size needs a value")?)?),
            "--expected" => expected = Some(args.next().ok_or("--expected needs a file")?),
            "-o" | "--output" => out = args.next(),
            "--no-waking" => mods.push(Box::new(|s| s.with_waking(false))),
            "--lost" => mods.push(Box::new(|s| s.lost_events(true))),
            "--buffer-started" => mods.push(Box::new(|s| s.buffer_started(true))),
            "--elided" => mods.push(Box::new(|s| s.elided(true))),
            "--no-trailing-newline" => mods.push(Box::new(|s| s.trailing_newline(false))),
            "--no-noise" => mods.push(Box::new(|s| s.noise(false))),
            "--overlong-comms" => mods.push(Box::new(|s| s.overlong_comms(true))),
            "--spaced-comms" => mods.push(Box::new(|s| s.spaced_comms(true))),
            "--empty-cpu" => mods.push(Box::new(|s| s.empty_cpu(true))),
            "--start-us" => {
                let v: u64 = num("--start-us", args.next())?;
                mods.push(Box::new(move |s| s.start_us(v)));
            }
            "--max-samples" => {
                let v: usize = num("--max-samples", args.next())?;
                mods.push(Box::new(move |s| s.max_samples(v)));
            }
            "--trace-cmd-version" => {
                let v: u32 = num("--trace-cmd-version", args.next())?;
                mods.push(Box::new(move |s| s.trace_cmd_version(v)));
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ => return Err(format!("unexpected argument {a:?}\n{USAGE}")),
        }
    }
    let wakeups = wakeups.unwrap_or(if size.is_some() { u64::MAX } else { 1000 });
    let mut sc = Scenario::new(sc_seed).cpus(cpus).wakeups(wakeups);
    if let Some(s) = size {
        sc = sc.size_limit(s);
        if expected.is_some() {
            // Keep the JSON manageable for benchmark-sized outputs.
            sc = sc.max_samples(100_000);
        }
    }
    for m in &mods {
        sc = m(sc);
    }
    let mut w = open_out(&out).map_err(|e| e.to_string())?;
    let exp = generate_to(&mut w, &sc, variant).map_err(|e| e.to_string())?;
    w.flush().map_err(|e| e.to_string())?;
    if let Some(path) = expected {
        fs::write(&path, expected_to_json(&exp)).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}

/// `tracegen perfetto-compact`.
fn perfetto_compact(mut args: impl Iterator<Item = String>) -> Result<(), String> {
    let mut spec = CompactSpec::new(0);
    let mut out = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--events" => {
                let v = args.next().ok_or("--events needs a value")?;
                spec.events = parse_count(&v)?;
            }
            "--cpus" => spec.cpus = num("--cpus", args.next())?,
            "--seed" => spec.seed = num("--seed", args.next())?,
            "--bundle-events" => spec.bundle_events = num("--bundle-events", args.next())?,
            "-o" | "--output" => out = args.next(),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ => return Err(format!("unexpected argument {a:?}\n{USAGE}")),
        }
    }
    if spec.events == 0 {
        return Err(format!("perfetto-compact needs --events N\n{USAGE}"));
    }
    if !(1..=64).contains(&spec.cpus) || spec.bundle_events < 8 {
        return Err("--cpus must be 1 to 64 and --bundle-events at least 8".into());
    }
    let path = out.ok_or("perfetto-compact needs -o OUT (the trace is binary)")?;
    let file = fs::File::create(&path).map_err(|e| format!("{path}: {e}"))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let n = write_compact(&mut w, &spec).map_err(|e| format!("{path}: {e}"))?;
    w.flush().map_err(|e| format!("{path}: {e}"))?;
    println!(
        "{{\"events\": {}, \"sched_switch\": {}, \"sched_waking\": {}, \"sched_wakeup\": {}, \"irq_handler_entry\": {}, \"irq_handler_exit\": {}, \"softirq_raise\": {}, \"softirq_entry\": {}, \"softirq_exit\": {}, \"hrtimer_start\": {}, \"hrtimer_expire_entry\": {}, \"hrtimer_expire_exit\": {}, \"cpu_idle\": {}, \"print\": {}, \"bundles\": {}, \"packets\": {}, \"bytes\": {}}}",
        n.events(),
        n.switches,
        n.wakings,
        n.wakeups,
        n.irq_entries,
        n.irq_exits,
        n.softirq_raises,
        n.softirq_entries,
        n.softirq_exits,
        n.hrtimer_starts,
        n.hrtimer_expire_entries,
        n.hrtimer_expire_exits,
        n.cpu_idles,
        n.prints,
        n.bundles,
        n.packets,
        n.bytes
    );
    Ok(())
}

/// A count with an optional K or M suffix (powers of 1000).
fn parse_count(s: &str) -> Result<u64, String> {
    let (num, mul) = match s.trim().char_indices().last() {
        Some((i, 'k' | 'K')) => (&s[..i], 1_000.0),
        Some((i, 'm' | 'M')) => (&s[..i], 1_000_000.0),
        _ => (s, 1.0),
    };
    let n: f64 = num.parse().map_err(|_| format!("bad count {s:?}"))?;
    Ok((n * mul) as u64)
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.contains("Broken pipe") => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tracegen: {e}");
            ExitCode::FAILURE
        }
    }
}
