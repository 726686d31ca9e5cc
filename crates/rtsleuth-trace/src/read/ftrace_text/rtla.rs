//! The payloads of rtla's kernel side: timerlat samples and osnoise noise events, as the kernel
//! prints them (`#29800 context thread timer_latency 859978 ns`, `thread_noise: insmod:1026
//! start 200.202586933 duration 838681 ns`) and as a trace.dat's fields render them
//! (`seqnum=1 context=1 timer_latency=932`, `start=… duration=… desc=local_timer vector=236`).

use super::line::{parse_seconds, TimestampUnit};
use crate::event::{EventKind, Fields, NoiseSource, OsnoiseCounts, TimerlatContext};

/// A timerlat sample in either form.
pub fn sample(p: &str) -> Option<EventKind<'_>> {
    printed_sample(p).or_else(|| field_sample(p))
}

/// `#N context C timer_latency L ns`, with any run of blanks between the words.
fn printed_sample(p: &str) -> Option<EventKind<'_>> {
    let mut w = p.trim_start().strip_prefix('#')?.split_ascii_whitespace();
    let seq = w.next()?.parse().ok()?;
    (w.next()? == "context").then_some(())?;
    let context = context_named(w.next()?)?;
    let latency_ns = last_ns(w, "timer_latency")?;
    Some(EventKind::TimerlatSample {
        seq,
        context,
        latency_ns,
    })
}

/// `seqnum=N context=C timer_latency=L`, the context a number (the kernel's enum) or a name.
fn field_sample(p: &str) -> Option<EventKind<'_>> {
    let f = Fields::new(p);
    let context = f.get("context")?;
    let context = match context.parse::<u32>() {
        Ok(0) => TimerlatContext::Irq,
        Ok(1) => TimerlatContext::Thread,
        Ok(2) => TimerlatContext::User,
        Ok(_) => return None,
        Err(_) => context_named(context)?,
    };
    Some(EventKind::TimerlatSample {
        seq: f.get_u64("seqnum")?,
        context,
        latency_ns: f.get_u64("timer_latency")?,
    })
}

fn context_named(s: &str) -> Option<TimerlatContext> {
    match s {
        "irq" => Some(TimerlatContext::Irq),
        "thread" => Some(TimerlatContext::Thread),
        "user-ret" | "user" => Some(TimerlatContext::User),
        _ => None,
    }
}

/// The source of an osnoise event by its name.
pub fn noise_source(name: &str) -> Option<NoiseSource> {
    match name {
        "nmi_noise" => Some(NoiseSource::Nmi),
        "irq_noise" => Some(NoiseSource::Irq),
        "softirq_noise" => Some(NoiseSource::Softirq),
        "thread_noise" => Some(NoiseSource::Thread),
        _ => None,
    }
}

/// A noise event in either form.
pub fn noise(source: NoiseSource, p: &str) -> Option<EventKind<'_>> {
    printed_noise(source, p).or_else(|| field_noise(source, p))
}

/// `[NAME:ID ]start S.NNNNNNNNN duration D ns`. A thread's name may hold colons and blanks:
/// the id follows the last colon before ` start `.
fn printed_noise(source: NoiseSource, p: &str) -> Option<EventKind<'_>> {
    let p = p.trim_start();
    let (who, rest) = match p.strip_prefix("start ") {
        Some(rest) => ("", rest),
        None => {
            let at = p.rfind(" start ")?;
            (p[..at].trim_end(), &p[at + " start ".len()..])
        }
    };
    let (name, id) = match who.rsplit_once(':') {
        Some((name, id)) => (name.trim_start(), Some(id.parse().ok()?)),
        None => (who, None),
    };
    let mut w = rest.split_ascii_whitespace();
    let start_ns = seconds_to_ns(w.next()?)?;
    let duration_ns = last_ns(w, "duration")?;
    Some(EventKind::OsnoiseNoise {
        source,
        name,
        id,
        start_ns,
        duration_ns,
    })
}

/// `start=NS duration=NS` with `desc=`/`vector=` (interrupts), `vector=` (softirqs) or
/// `comm=`/`pid=` (threads).
fn field_noise(source: NoiseSource, p: &str) -> Option<EventKind<'_>> {
    let f = Fields::new(p);
    let (name, id) = match source {
        NoiseSource::Nmi => ("", None),
        NoiseSource::Irq => (f.get("desc")?, Some(f.get_i64("vector")?)),
        NoiseSource::Softirq => ("", Some(f.get_i64("vector")?)),
        NoiseSource::Thread => (f.get("comm")?, Some(f.get_i64("pid")?)),
    };
    Some(EventKind::OsnoiseNoise {
        source,
        name,
        id: id.map(i32::try_from).transpose().ok()?,
        start_ns: f.get_u64("start")?,
        duration_ns: f.get_u64("duration")?,
    })
}

/// The osnoise tracer's period summary: as printed, `RUNTIME NOISE %AVAILABLE MAX HW NMI IRQ
/// SIRQ THREAD` (the percentage is derived, and checked to be a number), or trace.dat's
/// `runtime= noise= max_sample= hw_count= nmi_count= irq_count= softirq_count= thread_count=`.
pub fn summary(p: &str) -> Option<EventKind<'static>> {
    printed_summary(p).or_else(|| field_summary(p))
}

fn printed_summary(p: &str) -> Option<EventKind<'static>> {
    let w: Vec<&str> = p.split_ascii_whitespace().collect();
    let n = |i: usize| w.get(i)?.parse::<u64>().ok();
    (w.len() == 9 && w[2].parse::<f64>().is_ok()).then_some(())?;
    Some(EventKind::OsnoiseSummary {
        runtime_us: n(0)?,
        noise_us: n(1)?,
        max_single_us: n(3)?,
        counts: OsnoiseCounts {
            hw: n(4)?,
            nmi: n(5)?,
            irq: n(6)?,
            softirq: n(7)?,
            thread: n(8)?,
        },
    })
}

fn field_summary(p: &str) -> Option<EventKind<'static>> {
    let f = Fields::new(p);
    Some(EventKind::OsnoiseSummary {
        runtime_us: f.get_u64("runtime")?,
        noise_us: f.get_u64("noise")?,
        max_single_us: f.get_u64("max_sample")?,
        counts: OsnoiseCounts {
            hw: f.get_u64("hw_count")?,
            nmi: f.get_u64("nmi_count")?,
            irq: f.get_u64("irq_count")?,
            softirq: f.get_u64("softirq_count")?,
            thread: f.get_u64("thread_count")?,
        },
    })
}

/// Whether an unnamed payload is the osnoise tracer's summary: nine numbers.
pub fn is_summary(p: &str) -> bool {
    let w: Vec<&str> = p.split_ascii_whitespace().collect();
    w.len() == 9 && w.iter().all(|x| x.parse::<f64>().is_ok())
}

/// `sample_threshold: start S duration D ns interferences N`, or trace.dat's `start=
/// duration= interference=`.
pub fn threshold(p: &str) -> Option<EventKind<'static>> {
    printed_threshold(p).or_else(|| field_threshold(p))
}

fn printed_threshold(p: &str) -> Option<EventKind<'static>> {
    let mut w = p.split_ascii_whitespace();
    (w.next()? == "start").then_some(())?;
    let start_ns = seconds_to_ns(w.next()?)?;
    (w.next()? == "duration").then_some(())?;
    let duration_ns = w.next()?.parse().ok()?;
    (w.next()? == "ns" && w.next()? == "interferences").then_some(())?;
    let interferences = w.next()?.parse().ok()?;
    w.next().is_none().then_some(EventKind::OsnoiseThreshold {
        start_ns,
        duration_ns,
        interferences,
    })
}

fn field_threshold(p: &str) -> Option<EventKind<'static>> {
    let f = Fields::new(p);
    Some(EventKind::OsnoiseThreshold {
        start_ns: f.get_u64("start")?,
        duration_ns: f.get_u64("duration")?,
        interferences: f.get_u64("interference")?,
    })
}

/// The payload's last words: `KEY N ns`.
fn last_ns<'a>(mut w: impl Iterator<Item = &'a str>, key: &str) -> Option<u64> {
    (w.next()? == key).then_some(())?;
    let ns = w.next()?.parse().ok()?;
    (w.next()? == "ns" && w.next().is_none()).then_some(ns)
}

/// `200.202586933` as nanoseconds, read as the line's own timestamp is; the kernel prints
/// nine decimals here, and anything else is not its format.
fn seconds_to_ns(s: &str) -> Option<u64> {
    (s.split_once('.')?.1.len() == 9).then_some(())?;
    match parse_seconds(s)? {
        (ns, TimestampUnit::Seconds) => Some(ns),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise_of(name: &str, p: &str) -> Option<EventKind<'static>> {
        let p: &'static str = Box::leak(p.to_string().into_boxed_str());
        noise(noise_source(name)?, p)
    }

    #[test]
    fn samples_as_printed_and_as_fields() {
        let irq = EventKind::TimerlatSample {
            seq: 1,
            context: TimerlatContext::Irq,
            latency_ns: 932,
        };
        assert_eq!(
            sample("#1     context    irq timer_latency       932 ns"),
            Some(irq)
        );
        assert_eq!(sample("seqnum=1 context=0 timer_latency=932"), Some(irq));
        assert_eq!(sample("timer_latency=932 seqnum=1 context=0"), Some(irq));
        assert_eq!(
            sample("#29800 context thread timer_latency    859978 ns"),
            Some(EventKind::TimerlatSample {
                seq: 29800,
                context: TimerlatContext::Thread,
                latency_ns: 859_978,
            })
        );
        assert_eq!(
            sample("#3 context user-ret timer_latency 10 ns"),
            Some(EventKind::TimerlatSample {
                seq: 3,
                context: TimerlatContext::User,
                latency_ns: 10,
            })
        );
        for bad in [
            "#1 context irq timer_latency 932",
            "#1 context soft timer_latency 932 ns",
            "#x context irq timer_latency 932 ns",
            "seqnum=1 context=7 timer_latency=932",
            "",
        ] {
            assert_eq!(sample(bad), None, "{bad}");
        }
    }

    /// The osnoise tracer documentation's first line, and its sample_threshold line.
    #[test]
    fn osnoise_summaries_and_thresholds() {
        let first = EventKind::OsnoiseSummary {
            runtime_us: 1_000_000,
            noise_us: 190,
            max_single_us: 9,
            counts: OsnoiseCounts {
                hw: 18,
                nmi: 0,
                irq: 1007,
                softirq: 18,
                thread: 1,
            },
        };
        let printed = "1000000        190  99.98100       9     18      0   1007     18      1";
        assert!(is_summary(printed));
        assert_eq!(summary(printed), Some(first));
        let fields = "runtime=1000000 noise=190 max_sample=9 hw_count=18 nmi_count=0 irq_count=1007 softirq_count=18 thread_count=1";
        assert_eq!(summary(fields), Some(first));
        let t = EventKind::OsnoiseThreshold {
            start_ns: 5_789_858_404_555,
            duration_ns: 8812,
            interferences: 2,
        };
        assert_eq!(
            threshold("start 5789.858404555 duration 8812 ns interferences 2"),
            Some(t)
        );
        assert_eq!(
            threshold("start=5789858404555 duration=8812 interference=2"),
            Some(t)
        );
        for bad in [
            "start 5789.858404555 duration 8812 ns interferences",
            "start 5789.8584 duration 8812 ns interferences 2",
            "start 5789.858404555 duration x ns interferences 2",
        ] {
            assert_eq!(threshold(bad), None, "{bad}");
        }
        for bad in [
            "1000000 190 99.98100 9 18 0 1007 18",
            "a b c d e f g h i",
            "",
        ] {
            assert!(!is_summary(bad), "{bad}");
        }
        assert_eq!(summary("1000000 190 x 9 18 0 1007 18 1"), None);
    }

    #[test]
    fn noise_as_printed_and_as_fields() {
        assert_eq!(
            noise_of(
                "thread_noise",
                "  insmod:1026 start 200.202586933 duration 838681 ns"
            ),
            Some(EventKind::OsnoiseNoise {
                source: NoiseSource::Thread,
                name: "insmod",
                id: Some(1026),
                start_ns: 200_202_586_933,
                duration_ns: 838_681,
            })
        );
        // A thread name with a colon and a blank keeps them.
        let Some(EventKind::OsnoiseNoise { name, id, .. }) = noise_of(
            "thread_noise",
            "tmux: server:1613 start 1.000000000 duration 5 ns",
        ) else {
            panic!("not decoded");
        };
        assert_eq!((name, id), ("tmux: server", Some(1613)));
        assert_eq!(
            noise_of(
                "irq_noise",
                "local_timer:236 start 200.201939376 duration 7872 ns"
            ),
            Some(EventKind::OsnoiseNoise {
                source: NoiseSource::Irq,
                name: "local_timer",
                id: Some(236),
                start_ns: 200_201_939_376,
                duration_ns: 7872,
            })
        );
        assert_eq!(
            noise_of("nmi_noise", "start 5.000000001 duration 3 ns"),
            Some(EventKind::OsnoiseNoise {
                source: NoiseSource::Nmi,
                name: "",
                id: None,
                start_ns: 5_000_000_001,
                duration_ns: 3,
            })
        );
        assert_eq!(
            noise_of(
                "irq_noise",
                "start=200201939376 duration=7872 desc=local_timer vector=236"
            ),
            noise_of(
                "irq_noise",
                "local_timer:236 start 200.201939376 duration 7872 ns"
            )
        );
        assert_eq!(
            noise_of(
                "thread_noise",
                "comm=insmod pid=1026 start=200202586933 duration=838681"
            ),
            noise_of(
                "thread_noise",
                "insmod:1026 start 200.202586933 duration 838681 ns"
            )
        );
        for bad in [
            "insmod:x start 1.000000000 duration 5 ns",
            "insmod:1 start 1.5 duration 5 ns",
            "insmod:1 start 1.000000000 duration 5",
            "start=1",
        ] {
            assert_eq!(noise_of("thread_noise", bad), None, "{bad}");
        }
    }
}
