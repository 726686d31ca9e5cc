//! `rtsleuth report`: the page for a recorded trace as a golden; every number on it equal to
//! what `explain --json` and `latency --json` say; a bounded size on every lab run and
//! real-world trace; and a real browser that renders it from disk without a single request.

mod common;

use common::{golden, ok, realworld, repo_root, run};
use scraper::{ElementRef, Html, Selector};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const TRACE: &str = "tests/fixtures/recorded/variants/trace.txt";
const HARDIRQ: &str = "tests/fixtures/lab/rt/hardirq/trace.txt.zst";
/// "A few MB" on every input, whatever its length.
const MAX_BYTES: u64 = 3 << 20;

/// Runs `rtsleuth report ARGS -o <temp>` and returns the page.
fn report(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.html");
    let mut all = vec!["report", "-o", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let printed = ok(&all);
    assert!(printed.starts_with("wrote "), "{printed}");
    std::fs::read_to_string(out).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).unwrap()
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn text(e: ElementRef<'_>) -> String {
    e.text().collect::<String>().trim().to_string()
}

/// The cells of the rows of `table`'s body.
fn rows(table: ElementRef<'_>) -> Vec<Vec<String>> {
    table
        .select(&sel("tbody tr"))
        .map(|tr| tr.select(&sel("td")).map(text).collect())
        .collect()
}

/// A number printed on the page equals the JSON's (to the 3 decimals the page prints).
fn same_number(cell: &str, want: &Value, what: &str) {
    let got: f64 = cell
        .parse()
        .unwrap_or_else(|_| panic!("{what}: {cell:?} is not a number"));
    let want = want.as_f64().unwrap_or_else(|| panic!("{what}: {want}"));
    assert!(
        (got - want).abs() <= 5e-4 + want.abs() * 1e-9,
        "{what}: page {got}, JSON {want}"
    );
}

#[test]
fn golden_page() {
    golden("report-variants.html", &report(&["--top", "3", TRACE]));
}

/// The page's numbers are the commands' numbers: facts, warnings, findings, the aggregate,
/// the latency table and the histograms' marks.
#[test]
fn numbers_are_explains_and_latencys() {
    for (trace, extra) in [(TRACE, &["--threshold", "100"][..]), (HARDIRQ, &[][..])] {
        let mut args = extra.to_vec();
        args.push(trace);
        let page = Html::parse_document(&report(&args));
        let mut explain_args = vec!["explain", "--json", "--top", "10"];
        explain_args.extend_from_slice(&args);
        let explain = json(&explain_args);
        let latency = json(&["latency", "--json", trace]);
        let irq = json(&["irq", "--json", trace]);
        facts_and_warnings(&page, &explain, &[&latency, &irq]);
        findings(&page, &explain);
        aggregate(&page, &explain);
        latency_table(&page, &latency);
    }
}

fn facts_and_warnings(page: &Html, explain: &Value, others: &[&Value]) {
    let t = &explain["trace"];
    let one = |s: &str| text(page.select(&sel(s)).next().unwrap_or_else(|| panic!("{s}")));
    assert_eq!(one("#events"), t["events"].to_string());
    assert_eq!(one("#lost"), t["lost_events"].to_string());
    assert!(one("#cpus").starts_with(&t["cpus"].as_array().unwrap().len().to_string()));
    let shown: Vec<String> = page.select(&sel("#warnings li")).map(text).collect();
    for doc in std::iter::once(explain).chain(others.iter().copied()) {
        for w in doc["warnings"].as_array().unwrap() {
            assert!(
                shown.contains(&w.as_str().unwrap().to_string()),
                "{w} not shown: {shown:?}"
            );
        }
    }
}

fn findings(page: &Html, explain: &Value) {
    let want = explain["findings"].as_array().unwrap();
    let got: Vec<ElementRef> = page.select(&sel("article.finding")).collect();
    assert_eq!(got.len(), want.len());
    assert!(!want.is_empty());
    for (a, f) in got.iter().zip(want) {
        let one = |s: &str| text(a.select(&sel(s)).next().unwrap_or_else(|| panic!("{s}")));
        same_number(&one("h3 .latency"), &f["latency_us"], "latency");
        assert_eq!(one("h3 .root"), f["root_cause"].as_str().unwrap());
        assert_eq!(one("p.summary"), f["summary"].as_str().unwrap());
        let components = rows(a.select(&sel("table.components")).next().unwrap());
        let wc = f["components"].as_array().unwrap();
        assert_eq!(components.len(), wc.len());
        for (row, c) in components.iter().zip(wc) {
            same_number(&row[0], &c["us"], "component us");
            let share = c["us"].as_f64().unwrap() / f["latency_us"].as_f64().unwrap() * 100.0;
            assert_eq!(row[1], format!("{share:.1}%"));
            assert_eq!(row[2], c["kind"].as_str().unwrap());
            assert_eq!(row[4], c["culprit"].as_str().unwrap_or("-"));
        }
        let stretches = rows(a.select(&sel("table.stretches")).next().unwrap());
        let wt = f["timeline"].as_array().unwrap();
        assert_eq!(stretches.len(), wt.len());
        for (row, s) in stretches.iter().zip(wt) {
            same_number(&row[0], &s["start_ts"], "stretch start");
            let us = (s["end_ts"].as_f64().unwrap() - s["start_ts"].as_f64().unwrap()) * 1e6;
            same_number(&row[2], &Value::from(us), "stretch us");
            assert_eq!(row[3], s["kind"].as_str().unwrap());
        }
        // The drawing's ladder ends where the task ran: its latency after the due time.
        if !f["expected_ts"].is_null() {
            let end = format!("switched in {}", text_us(&f["latency_us"]));
            assert!(svg_texts(*a).contains(&end), "{end} not in the timeline");
        }
    }
}

fn aggregate(page: &Html, explain: &Value) {
    let want = explain["aggregate"].as_array().unwrap();
    let table = page.select(&sel("#causes > table")).next().unwrap();
    let got = rows(table);
    assert_eq!(got.len(), want.len());
    for (row, a) in got.iter().zip(want) {
        assert_eq!(row[0], a["kind"].as_str().unwrap());
        assert_eq!(row[1], a["culprit"].as_str().unwrap_or("-"));
        assert_eq!(row[2], a["spikes"].to_string());
        same_number(&row[3], &a["total_us"], "aggregate total");
        same_number(&row[4], &a["max_us"], "aggregate max");
    }
    // Each culprit bar is labelled with its row's total and spikes.
    let bars = svg_texts(page.select(&sel("#by-culprit")).next().unwrap());
    for a in want.iter().take(15) {
        let n = a["spikes"].as_u64().unwrap();
        let label = format!(
            "{} us ({n} spike{})",
            text_us(&a["total_us"]),
            if n == 1 { "" } else { "s" }
        );
        assert!(bars.contains(&label), "{label} not on the culprit chart");
    }
}

fn latency_table(page: &Html, latency: &Value) {
    let table = page.select(&sel("#latency > table")).next().unwrap();
    let got = rows(table);
    let want = latency["tasks"].as_array().unwrap();
    assert_eq!(got.len(), want.len().min(100));
    let columns = [
        (3, "runtime_us", 1e-3),
        (6, "avg_us", 1.0),
        (7, "p50_us", 1.0),
        (8, "p99_us", 1.0),
        (9, "p999_us", 1.0),
        (10, "max_us", 1.0),
        (11, "max_at_ts", 1.0),
    ];
    for (row, t) in got.iter().zip(want) {
        assert_eq!(row[0], t["comm"].as_str().unwrap());
        assert_eq!(row[1], t["pid"].to_string());
        assert_eq!(row[4], t["switches"].to_string());
        assert_eq!(row[5], t["wakeups"].to_string());
        if t["wakeups"].as_u64() == Some(0) {
            continue;
        }
        for (i, field, scale) in columns {
            same_number(
                &row[i],
                &Value::from(t[field].as_f64().unwrap() * scale),
                field,
            );
        }
    }
    // One histogram per real-time task woken, captioned with its row's marks.
    let rt: Vec<&Value> = want
        .iter()
        .filter(|t| t["prio"].as_i64().is_some_and(|p| p < 100) && t["wakeups"].as_u64() > Some(0))
        .take(12)
        .collect();
    let figures: Vec<ElementRef> = page.select(&sel("figure.hist")).collect();
    assert_eq!(figures.len(), rt.len());
    for (fig, t) in figures.iter().zip(rt) {
        let one = |s: &str| text(fig.select(&sel(s)).next().unwrap());
        assert_eq!(one(".wakeups"), t["wakeups"].to_string());
        for (s, field) in [(".p99", "p99_us"), (".p999", "p999_us"), (".max", "max_us")] {
            same_number(&one(s), &t[field], field);
        }
        let max = format!("max {} us", text_us(&t["max_us"]));
        assert!(svg_texts(*fig).contains(&max), "{max} not on the histogram");
    }
}

/// The labels drawn in the SVG charts under `e`.
fn svg_texts(e: ElementRef<'_>) -> Vec<String> {
    e.select(&sel("svg text")).map(text).collect()
}

/// A JSON microsecond value as the page prints it.
fn text_us(v: &Value) -> String {
    let us = (v.as_f64().unwrap() * 1000.0).round() / 1000.0;
    if us.fract() == 0.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.3}").trim_end_matches('0').to_string()
    }
}

/// The page never points outside itself: no script, stylesheet, image, frame or font, no
/// link but to its own sections. (The SVG namespace URI is a name, not a request.)
#[test]
fn the_page_references_nothing_outside_itself() {
    let html = report(&[HARDIRQ]);
    let page = Html::parse_document(&html);
    for tag in [
        "script", "link", "img", "iframe", "object", "embed", "image", "use",
    ] {
        assert!(page.select(&sel(tag)).next().is_none(), "a <{tag}> element");
    }
    for e in page.select(&sel("[href], [src], [xlink\\:href]")) {
        let v = e.attr("href").or(e.attr("src")).unwrap_or("?");
        assert!(v.starts_with('#'), "{} points at {v}", e.value().name());
    }
    assert!(!html.contains("url("), "a CSS url()");
    assert!(!html.contains("@import"), "a CSS @import");
    let without_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_ns.contains("http:") && !without_ns.contains("https:"));
}

/// Every lab run and every real-world Perfetto trace gives a page of a few MB at most.
#[test]
fn the_page_stays_small_on_every_input() {
    let mut inputs: Vec<PathBuf> = Vec::new();
    let lab = repo_root().join("tests/fixtures/lab");
    for kernel in std::fs::read_dir(&lab).unwrap() {
        let kernel = kernel.unwrap().path();
        if !kernel.is_dir() {
            continue;
        }
        for run in std::fs::read_dir(&kernel).unwrap() {
            let run = run.unwrap().path();
            for name in ["trace.txt.zst", "trace.dat.zst"] {
                if run.join(name).is_file() {
                    inputs.push(run.join(name));
                }
            }
        }
    }
    // Every kernel's runs (rt, stock, tracer): a wrong walk must not pass on nothing.
    assert!(inputs.len() >= 28, "{} lab traces", inputs.len());
    if let Some(dir) = realworld("ms-perf-tools-linux-android/TestData/Perfetto") {
        for f in std::fs::read_dir(dir).unwrap() {
            inputs.push(f.unwrap().path());
        }
    }
    let out = tempfile::tempdir().unwrap();
    for input in &inputs {
        let page = out.path().join("report.html");
        let o = run(&[
            "report",
            input.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{}: {}",
            input.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let size = std::fs::metadata(&page).unwrap().len();
        println!("{:>9} bytes  {}", size, input.display());
        assert!(size < MAX_BYTES, "{}: {size} bytes", input.display());
    }
}

/// Headless Chromium, if installed (CI installs it; there a missing browser fails the test).
fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium not found and CI is set (.ci/run installs it)"
        );
        println!("skipped: chromium not found (apt-get install chromium)");
    }
    found
}

/// Loads `page` in headless Chromium with every host name unresolvable, and returns the DOM it
/// rendered and the URLs of the network requests made on behalf of the page (Chromium's own
/// background requests are told apart by their isolation key, which is not `file://`).
fn load(browser: &str, page: &Path) -> (String, Vec<String>) {
    let profile = tempfile::tempdir().unwrap();
    let netlog = profile.path().join("netlog.json");
    let out = Command::new(browser)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
        ])
        .arg("--host-resolver-rules=MAP * ~NOTFOUND")
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&netlog).unwrap()).unwrap();
    let start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].clone();
    let requests = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == start)
        .filter(|e| {
            e["params"]["network_isolation_key"]
                .as_str()
                .is_some_and(|k| k.starts_with("file://"))
        })
        .filter_map(|e| e["params"]["url"].as_str())
        .filter(|u| !u.starts_with("file:"))
        .map(str::to_string)
        .collect();
    (String::from_utf8(out.stdout).unwrap(), requests)
}

/// A real browser renders the page from disk, with the findings' numbers in its DOM, and the
/// page asks the network for nothing. A page that does ask is caught, so the check is real.
#[test]
fn chromium_renders_it_offline() {
    let Some(browser) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary.html");
    std::fs::write(
        &canary,
        "<html><body><img src=\"http://example.com/x.png\"></body></html>",
    )
    .unwrap();
    let (_, asked) = load(browser, &canary);
    assert_eq!(
        asked,
        ["http://example.com/x.png"],
        "the request check sees nothing"
    );

    let page = dir.path().join("report.html");
    let o = run(&["report", HARDIRQ, "-o", page.to_str().unwrap()]);
    assert!(o.status.success());
    let (dom, asked) = load(browser, &page);
    assert!(asked.is_empty(), "the page made requests: {asked:?}");
    let explain = json(&["explain", "--json", "--top", "10", HARDIRQ]);
    let dom = Html::parse_document(&dom);
    let shown: Vec<String> = dom
        .select(&sel("article.finding h3 .latency"))
        .map(text)
        .collect();
    let want: Vec<String> = explain["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| text_us(&f["latency_us"]))
        .collect();
    assert_eq!(shown, want);
    // The timelines were parsed as SVG: their stretches are rectangles in the DOM.
    assert!(dom.select(&sel("article.finding svg rect")).count() > 0);
}
