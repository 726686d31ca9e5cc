//! The page's only style sheet, inline. System fonts only (nothing to fetch); a print layout
//! that keeps each finding on one page and drops the navigation.

pub const CSS: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto; max-width: 1000px; padding: 0 1em; color: #111; line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: .2em; }
h2 { font-size: 1.25em; border-bottom: 2px solid #0072b2; padding-bottom: .15em; margin-top: 1.8em; }
h3 { font-size: 1.02em; margin: 1.2em 0 .4em; }
code, pre, td { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .85em; }
nav a { color: #0072b2; }
table { border-collapse: collapse; margin: .4em 0 1em; }
th, td { padding: .15em .6em; border-bottom: 1px solid #ddd; vertical-align: top; }
thead th { border-bottom: 2px solid #888; }
.r { text-align: right; } .l { text-align: left; }
td.kind { white-space: nowrap; }
table.pairs th { font-weight: 600; padding-right: 1.5em; }
.warn { background: #fff4e0; border: 2px solid #d55e00; padding: .4em 1em; margin: 1em 0; }
.warn h2 { border: none; margin: .3em 0; color: #a04000; font-size: 1.1em; }
.ok { background: #eef8f2; border: 1px solid #009e73; padding: .4em 1em; }
.note { color: #555; font-size: .9em; }
.summary { font-weight: 500; }
article.finding { border-top: 1px solid #ccc; padding-top: .3em; margin-top: 1.2em; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .4em 1.2em; font-size: .9em; }
.swatch { display: inline-block; width: .9em; height: .9em; margin-right: .35em; vertical-align: -.1em; border: 1px solid #555; }
figure { margin: .5em 0; }
figure svg { max-width: 100%; height: auto; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; }
figcaption { font-size: .9em; }
footer { margin-top: 3em; color: #777; font-size: .85em; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  nav, footer { display: none; }
  article.finding, figure, table { break-inside: avoid; }
  h2 { break-after: avoid; }
  details > table { display: table; }
  .warn { border-width: 1pt; }
}
"#;
