//! Medians, ratios, the tables and the targets.

use std::fmt::Write;

use crate::harness::{CaseResult, Pairing, Sample, Shape};

/// The median of one measure over a case's samples.
pub fn median(samples: &[Sample], measure: impl Fn(&Sample) -> f64) -> f64 {
    let mut values: Vec<f64> = samples.iter().map(measure).filter(|v| v.is_finite()).collect();
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 }
}

/// One case's medians for A and B.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The case's name.
    pub name: String,
    /// Its shape.
    pub shape: Shape,
    /// Its credit.
    pub credit: u32,
    /// Whether it is the memory-growth case.
    pub memory: bool,
    /// Rounds run.
    pub rounds: usize,
    /// A's medians.
    pub a: Medians,
    /// B's medians.
    pub b: Medians,
    /// Every sample of both was clean.
    pub clean: bool,
}

/// The medians of one handler's samples.
#[derive(Clone, Copy, Debug)]
pub struct Medians {
    /// Events per second.
    pub events_per_sec: f64,
    /// p50 latency, µs.
    pub p50_us: f64,
    /// p99 latency, µs.
    pub p99_us: f64,
    /// p99.9 latency, µs.
    pub p999_us: f64,
    /// Handler CPU per event, µs.
    pub cpu_us: f64,
    /// Load generator CPU per event, µs.
    pub gen_cpu_us: f64,
    /// Peak RSS, MiB.
    pub peak_rss_mib: f64,
    /// RSS after the warm-up, MiB.
    pub rss_warm_mib: f64,
    /// RSS at the end, MiB.
    pub rss_end_mib: f64,
    /// Heap allocations per event.
    pub allocs: f64,
    /// Bytes allocated per event.
    pub alloc_bytes: f64,
    /// Voluntary context switches per event.
    pub voluntary_cs: f64,
    /// Involuntary context switches per event.
    pub involuntary_cs: f64,
}

impl Medians {
    fn of(samples: &[Sample]) -> Medians {
        Medians {
            events_per_sec: median(samples, |s| s.events_per_sec),
            p50_us: median(samples, |s| s.p50_us),
            p99_us: median(samples, |s| s.p99_us),
            p999_us: median(samples, |s| s.p999_us),
            cpu_us: median(samples, |s| s.cpu_us_per_event),
            gen_cpu_us: median(samples, |s| s.gen_cpu_us_per_event),
            peak_rss_mib: median(samples, |s| s.peak_rss_kib as f64 / 1024.0),
            rss_warm_mib: median(samples, |s| s.rss_after_warmup_kib as f64 / 1024.0),
            rss_end_mib: median(samples, |s| s.rss_end_kib as f64 / 1024.0),
            allocs: median(samples, |s| s.allocs_per_event),
            alloc_bytes: median(samples, |s| s.alloc_bytes_per_event),
            voluntary_cs: median(samples, |s| s.voluntary_cs_per_event),
            involuntary_cs: median(samples, |s| s.involuntary_cs_per_event),
        }
    }

    /// RSS growth from after the warm-up to the end, in percent.
    pub fn rss_growth_pct(&self) -> f64 {
        (self.rss_end_mib - self.rss_warm_mib) / self.rss_warm_mib * 100.0
    }
}

/// Summarises every case.
pub fn summarise(results: &[CaseResult]) -> Vec<Summary> {
    results
        .iter()
        .filter(|r| !r.a.is_empty() || !r.b.is_empty())
        .map(|r| Summary {
            name: r.case.name.clone(),
            shape: r.case.shape.clone(),
            credit: r.case.credit,
            memory: r.case.memory,
            rounds: r.a.len().max(r.b.len()),
            a: Medians::of(&r.a),
            b: Medians::of(&r.b),
            clean: r.a.iter().chain(&r.b).all(Sample::is_clean),
        })
        .collect()
}

fn ratio(a: f64, b: f64) -> f64 {
    a / b
}

/// The cases whose (B) is the hand-written handler: the resource cases,
/// whose (B) is the SDK handler on a direct client, have a table of their
/// own ([`resource_table`]), so that no A/B column mixes the two meanings.
fn against_raw(summaries: &[Summary]) -> impl Iterator<Item = &Summary> {
    summaries.iter().filter(|s| s.shape.pairing() == Pairing::SdkVsRaw)
}

/// The resource cases: (A) the SDK's handle, (B) the same client crate
/// called directly, both in the SDK handler. CPU, allocations and bytes
/// per event of each, and A/B: the handle's cost per operation, with
/// throughput, p50 and voluntary switches for context.
pub fn resource_table(summaries: &[Summary]) -> String {
    let mut out = String::new();
    out.push_str(
        "| case | A CPU µs/ev | B CPU µs/ev | A/B | A − B µs | A allocs/ev | B allocs/ev | A − B | A bytes/ev | B bytes/ev \
         | A ev/s | B ev/s | A p50 µs | B p50 µs | A vol. cs/ev | B vol. cs/ev |\n",
    );
    out.push_str(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for s in summaries.iter().filter(|s| s.shape.pairing() == Pairing::SdkHandleVsDirectClient) {
        let _ = writeln!(
            out,
            "| {}{} | {:.2} | {:.2} | {} | {:+.2} | {} | {} | {} | {} | {} | {:.0} | {:.0} | {:.1} | {:.1} | {} | {} |",
            s.name,
            if s.clean { "" } else { " (ERRORS)" },
            s.a.cpu_us,
            s.b.cpu_us,
            ratio_cell(s.a.cpu_us, s.b.cpu_us),
            s.a.cpu_us - s.b.cpu_us,
            value(s.a.allocs, 1),
            value(s.b.allocs, 1),
            value(s.a.allocs - s.b.allocs, 1),
            value(s.a.alloc_bytes, 0),
            value(s.b.alloc_bytes, 0),
            s.a.events_per_sec,
            s.b.events_per_sec,
            s.a.p50_us,
            s.b.p50_us,
            value(s.a.voluntary_cs, 3),
            value(s.b.voluntary_cs, 3),
        );
    }
    out
}

/// The throughput and cost table: events/s, CPU per event, peak RSS.
pub fn throughput_table(summaries: &[Summary]) -> String {
    let mut out = String::new();
    out.push_str(
        "| case | A ev/s | B ev/s | A/B | A CPU µs/ev | B CPU µs/ev | A/B | A peak RSS MiB | B peak RSS MiB | gen CPU µs/ev (A / B) |\n",
    );
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for s in against_raw(summaries) {
        let _ = writeln!(
            out,
            "| {}{} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} | {:.1} | {:.2} / {:.2} |",
            s.name,
            if s.clean { "" } else { " (ERRORS)" },
            s.a.events_per_sec,
            s.b.events_per_sec,
            ratio(s.a.events_per_sec, s.b.events_per_sec),
            s.a.cpu_us,
            s.b.cpu_us,
            ratio(s.a.cpu_us, s.b.cpu_us),
            s.a.peak_rss_mib,
            s.b.peak_rss_mib,
            s.a.gen_cpu_us,
            s.b.gen_cpu_us,
        );
    }
    out
}

/// The latency table: p50, p99 and p99.9 for A and B, and A/B.
pub fn latency_table(summaries: &[Summary]) -> String {
    let mut out = String::new();
    out.push_str("| case | A p50 µs | B p50 µs | A/B | A p99 µs | B p99 µs | A/B | A p99.9 µs | B p99.9 µs | A/B |\n");
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for s in against_raw(summaries) {
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.1} | {:.2} | {:.1} | {:.1} | {:.2} | {:.1} | {:.1} | {:.2} |",
            s.name,
            s.a.p50_us,
            s.b.p50_us,
            ratio(s.a.p50_us, s.b.p50_us),
            s.a.p99_us,
            s.b.p99_us,
            ratio(s.a.p99_us, s.b.p99_us),
            s.a.p999_us,
            s.b.p999_us,
            ratio(s.a.p999_us, s.b.p999_us),
        );
    }
    out
}

/// A value with `precision` decimals, or `—` when it was not measured.
fn value(v: f64, precision: usize) -> String {
    if v.is_finite() { format!("{v:.precision$}") } else { "—".to_string() }
}

/// A/B with two decimals, or `—` when either is missing or B is zero.
fn ratio_cell(a: f64, b: f64) -> String {
    if a.is_finite() && b.is_finite() && b != 0.0 { format!("{:.2}", a / b) } else { "—".to_string() }
}

/// The counts table: heap allocations (calls and bytes) and context switches
/// (voluntary and involuntary, all threads) of the handler process per
/// measured event, for A and B, and A/B. The involuntary switches follow the
/// machine's load more than the handler: no ratio.
pub fn counts_table(summaries: &[Summary]) -> String {
    let mut out = String::new();
    out.push_str(
        "| case | A allocs/ev | B allocs/ev | A/B | A bytes/ev | B bytes/ev | A/B | A vol. cs/ev | B vol. cs/ev | A/B | A invol. cs/ev | B invol. cs/ev |\n",
    );
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for s in against_raw(summaries) {
        let _ = writeln!(
            out,
            "| {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.name,
            if s.clean { "" } else { " (ERRORS)" },
            value(s.a.allocs, 1),
            value(s.b.allocs, 1),
            ratio_cell(s.a.allocs, s.b.allocs),
            value(s.a.alloc_bytes, 0),
            value(s.b.alloc_bytes, 0),
            ratio_cell(s.a.alloc_bytes, s.b.alloc_bytes),
            value(s.a.voluntary_cs, 3),
            value(s.b.voluntary_cs, 3),
            ratio_cell(s.a.voluntary_cs, s.b.voluntary_cs),
            value(s.a.involuntary_cs, 3),
            value(s.b.involuntary_cs, 3),
        );
    }
    out
}

/// The memory-growth table.
pub fn memory_table(summaries: &[Summary]) -> String {
    let mut out = String::new();
    out.push_str("| case | handler | RSS after warm-up MiB | RSS at end MiB | growth | peak RSS MiB |\n");
    out.push_str("| --- | --- | ---: | ---: | ---: | ---: |\n");
    for s in summaries.iter().filter(|s| s.memory) {
        for (label, m) in [("A", &s.a), ("B", &s.b)] {
            let _ = writeln!(
                out,
                "| {} | {label} | {:.2} | {:.2} | {:+.1} % | {:.2} |",
                s.name,
                m.rss_warm_mib,
                m.rss_end_mib,
                m.rss_growth_pct(),
                m.peak_rss_mib
            );
        }
    }
    out
}

/// One target of the issue, and whether this run met it.
#[derive(Clone, Debug)]
pub struct Target {
    /// The measure.
    pub measure: String,
    /// The target.
    pub target: String,
    /// What was measured.
    pub measured: String,
    /// `None` when the run had no case for it.
    pub met: Option<bool>,
}

/// Evaluates the targets on the summaries present: CPU per event
/// against (B) at credit 256 and 16, throughput at credit 256, p50 at
/// credit 1, throughput with 64 KiB bodies, CPU per consumer batch,
/// memory, and the CPU of a resource operation through the SDK's handle
/// against the client crate called directly (and the allocations of a
/// `SELECT 1`).
pub fn targets(summaries: &[Summary]) -> Vec<Target> {
    let cpu = |s: &Summary| ratio(s.a.cpu_us, s.b.cpu_us);
    let throughput = |s: &Summary| ratio(s.a.events_per_sec, s.b.events_per_sec);
    let p50 = |s: &Summary| ratio(s.a.p50_us, s.b.p50_us);
    let at_most = |bound: f64| move |r: f64| r <= bound;
    let at_least = |bound: f64| move |r: f64| r >= bound;
    let mut targets = vec![
        bounded(
            summaries,
            "CPU per event at credit 256, 0 B and 1 KiB",
            "≤ 2.5 × (B)",
            &["http/c256/0B/1tag", "http/c256/1KiB/1tag"],
            cpu,
            at_most(2.5),
        ),
        bounded(
            summaries,
            "CPU per event at credit 16, 1 KiB",
            "≤ 2.0 × (B)",
            &["http/c16/1KiB/1tag"],
            cpu,
            at_most(2.0),
        ),
        bounded(
            summaries,
            "throughput at credit 256, 1 KiB",
            "≥ 0.7 of (B)",
            &["http/c256/1KiB/1tag"],
            throughput,
            at_least(0.7),
        ),
        bounded(
            summaries,
            "p50 latency at credit 1, 0 B and 1 KiB",
            "≤ 1.3 × (B)",
            &["http/c1/0B/1tag", "http/c1/1KiB/1tag"],
            p50,
            at_most(1.3),
        ),
        bounded(
            summaries,
            "64 KiB bodies, throughput at credit 16 and 256",
            "≥ 0.9 of (B)",
            &["http/c16/64KiB/1tag", "http/c256/64KiB/1tag"],
            throughput,
            at_least(0.9),
        ),
        bounded(
            summaries,
            "consumer batch of 100, CPU per batch",
            "≤ 2.0 × (B)",
            &["consumer/c16/100rec-10fail"],
            cpu,
            at_most(2.0),
        ),
        bounded(
            summaries,
            "CPU per cache get and queue send, SDK handle against the redis crate directly",
            "≤ 1.05 ×",
            &["cache-get/c16", "queue-send/c16"],
            cpu,
            at_most(1.05),
        ),
        bounded(
            summaries,
            "CPU per bucket put of 64 KiB and datastore get, SDK handle against the AWS SDK directly",
            "≤ 1.05 ×",
            &["bucket-put/c16", "datastore-get/c16"],
            cpu,
            at_most(1.05),
        ),
        bounded(
            summaries,
            "CPU per SELECT 1, SDK handle against sqlx directly",
            "≤ 1.02 ×",
            &["sql-select/c16"],
            cpu,
            at_most(1.02),
        ),
        bounded(
            summaries,
            "allocations per SELECT 1, SDK handle against sqlx directly",
            "≤ 1.02 ×",
            &["sql-select/c16"],
            |s| ratio(s.a.allocs, s.b.allocs),
            at_most(1.02),
        ),
    ];

    let rss: Vec<(&str, f64)> = summaries
        .iter()
        .filter(|s| !s.memory && s.credit == 256 && matches!(s.shape, Shape::Http { body, .. } if body == 1 << 10))
        .map(|s| (s.name.as_str(), s.a.peak_rss_mib))
        .collect();
    targets.push(if rss.is_empty() {
        missing("handler RSS at credit 256, 1 KiB", "≤ 10 MiB")
    } else {
        let worst = rss.iter().copied().fold(("", 0.0), |w, x| if x.1 > w.1 { x } else { w });
        Target {
            measure: "handler RSS at credit 256, 1 KiB".into(),
            target: "≤ 10 MiB".into(),
            measured: format!("peak {:.1} MiB ({})", worst.1, worst.0),
            met: Some(worst.1 <= 10.0),
        }
    });

    targets.push(match summaries.iter().find(|s| s.memory) {
        Some(s) => {
            let growth = s.a.rss_growth_pct();
            Target {
                measure: format!("RSS growth after warm-up ({})", s.name),
                target: "≤ 2 %".into(),
                measured: format!(
                    "{growth:+.1} % ({:.2} → {:.2} MiB; B {:+.1} %)",
                    s.a.rss_warm_mib,
                    s.a.rss_end_mib,
                    s.b.rss_growth_pct()
                ),
                met: Some(growth <= 2.0),
            }
        }
        None => missing("RSS growth after warm-up", "≤ 2 %"),
    });
    targets
}

/// A target on a measure of each of `cases` (A against B), met when `ok`
/// holds for every one of them that ran.
fn bounded(
    summaries: &[Summary],
    measure: &str,
    target: &str,
    cases: &[&str],
    value: impl Fn(&Summary) -> f64,
    ok: impl Fn(f64) -> bool,
) -> Target {
    let values: Vec<(&str, f64)> = cases
        .iter()
        .filter_map(|&name| summaries.iter().find(|s| s.name == name && !s.memory).map(|s| (name, value(s))))
        .collect();
    if values.is_empty() {
        return missing(measure, target);
    }
    Target {
        measure: measure.into(),
        target: target.into(),
        measured: values.iter().map(|(name, v)| format!("{v:.2} ({name})")).collect::<Vec<_>>().join(", "),
        met: Some(values.iter().all(|(_, v)| ok(*v))),
    }
}

fn missing(measure: &str, target: &str) -> Target {
    Target { measure: measure.into(), target: target.into(), measured: "not run".into(), met: None }
}

/// The targets as a table.
pub fn targets_table(targets: &[Target]) -> String {
    let mut out = String::new();
    out.push_str("| measure | target | measured (A) | met |\n| --- | --- | --- | --- |\n");
    for t in targets {
        let met = match t.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        };
        let _ = writeln!(out, "| {} | {} | {} | {met} |", t.measure, t.target, t.measured);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        let s = |v: f64| Sample { events_per_sec: v, ..Sample::default() };
        assert_eq!(median(&[s(3.0), s(1.0), s(2.0)], |x| x.events_per_sec), 2.0);
        assert_eq!(median(&[s(4.0), s(1.0), s(2.0), s(3.0)], |x| x.events_per_sec), 2.5);
        assert!(median(&[], |x| x.events_per_sec).is_nan());
    }

    #[test]
    fn counts_not_measured_read_as_a_dash() {
        let sample =
            |allocs: f64| Sample { allocs_per_event: allocs, voluntary_cs_per_event: 0.0, ..Sample::default() };
        let result = CaseResult {
            case: crate::harness::matrix(crate::harness::Mode::Smoke).remove(0),
            a: vec![sample(20.0), sample(22.0)],
            b: vec![sample(f64::NAN)],
        };
        let table = counts_table(&summarise(&[result]));
        let row = table.lines().nth(2).unwrap();
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // case, A allocs, B allocs, A/B, …, A vol., B vol., A/B
        assert_eq!(&cells[1..5], ["http/c1/0B/1tag (ERRORS)", "21.0", "—", "—"], "{row}");
        assert_eq!(&cells[8..11], ["0.000", "0.000", "—"], "{row}");
    }

    #[test]
    fn resource_cases_have_a_table_of_their_own_and_a_target() {
        let matrix = crate::harness::matrix(crate::harness::Mode::Smoke);
        let case = |name: &str| matrix.iter().find(|c| c.name == name).unwrap().clone();
        let sample =
            |cpu: f64| Sample { cpu_us_per_event: cpu, answered: 1, dispatched: 1, exit_ok: true, ..Sample::default() };
        let results = [
            CaseResult { case: case("cache-get/c16"), a: vec![sample(10.4)], b: vec![sample(10.0)] },
            CaseResult { case: case("queue-send/c16"), a: vec![sample(11.0)], b: vec![sample(10.0)] },
            CaseResult { case: case("sql-select/c16"), a: vec![sample(20.2)], b: vec![sample(20.0)] },
            CaseResult { case: case("http/c16/1KiB/1tag"), a: vec![sample(2.0)], b: vec![sample(1.0)] },
        ];
        let summaries = summarise(&results);
        let main = throughput_table(&summaries);
        assert!(main.contains("http/c16/1KiB/1tag") && !main.contains("cache-get"), "{main}");
        let resources = resource_table(&summaries);
        assert!(resources.contains("| cache-get/c16 | 10.40 | 10.00 | 1.04 | +0.40 |"), "{resources}");
        assert!(resources.contains("| queue-send/c16 | 11.00 | 10.00 | 1.10 |") && !resources.contains("http/"));
        let target = targets(&summaries).into_iter().find(|t| t.measure.starts_with("CPU per cache get")).unwrap();
        assert_eq!(target.met, Some(false), "1.10 is over 1.05");
        assert_eq!(target.measured, "1.04 (cache-get/c16), 1.10 (queue-send/c16)");
        assert!(resources.contains("| sql-select/c16 | 20.20 | 20.00 | 1.01 |"), "{resources}");
        let sql = targets(&summaries).into_iter().find(|t| t.measure.starts_with("CPU per SELECT 1")).unwrap();
        assert_eq!((sql.met, sql.measured.as_str()), (Some(true), "1.01 (sql-select/c16)"));
    }

    #[test]
    fn targets_are_read_on_their_cases_and_missing_ones_say_so() {
        let case = |name: &str| {
            crate::harness::matrix(crate::harness::Mode::Smoke).into_iter().find(|c| c.name == name).unwrap()
        };
        let sample = |events: f64, cpu: f64| Sample {
            events_per_sec: events,
            cpu_us_per_event: cpu,
            answered: 1,
            dispatched: 1,
            ..Sample::default()
        };
        let results = [
            CaseResult { case: case("http/c256/1KiB/1tag"), a: vec![sample(800.0, 3.0)], b: vec![sample(1000.0, 1.0)] },
            CaseResult { case: case("http/c16/1KiB/1tag"), a: vec![sample(500.0, 1.9)], b: vec![sample(1000.0, 1.0)] },
        ];
        let targets = targets(&summarise(&results));
        let by = |measure: &str| targets.iter().find(|t| t.measure.starts_with(measure)).unwrap();
        let cpu256 = by("CPU per event at credit 256");
        assert_eq!(cpu256.met, Some(false), "3.0 × is over 2.5 ×");
        assert_eq!(cpu256.measured, "3.00 (http/c256/1KiB/1tag)", "only the case that ran");
        assert_eq!(by("CPU per event at credit 16").met, Some(true));
        assert_eq!(by("throughput at credit 256").met, Some(true), "0.8 of (B)");
        assert_eq!(by("p50 latency").met, None);
        assert_eq!(by("consumer batch").measured, "not run");
    }
}
