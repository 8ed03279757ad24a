//! What `/proc` says about a process: CPU time, resident memory and context
//! switches.

use std::time::Duration;

/// CPU time the process has used, all its threads together, to the
/// nanosecond: the kernel's own account of it, read through the process's
/// CPU clock (`clock_getcpuclockid`). Where that clock cannot be read, from
/// `/proc/<pid>/stat` (`utime` + `stime`, in clock ticks, usually 10 ms
/// each), which cannot tell apart measured phases of a few tens of
/// milliseconds.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid place for the clock's id to be written.
    let found = unsafe { libc::clock_getcpuclockid(pid as libc::pid_t, &mut clock) } == 0;
    found.then(|| clock_time(clock)).flatten().or_else(|| ticks_of(&format!("/proc/{pid}/stat")))
}

/// CPU time of this process, as [`cpu_time`] reads it.
pub fn own_cpu_time() -> Option<Duration> {
    clock_time(libc::CLOCK_PROCESS_CPUTIME_ID).or_else(|| ticks_of("/proc/self/stat"))
}

fn clock_time(clock: libc::clockid_t) -> Option<Duration> {
    let mut time = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `time` is a valid place for the reading to be written.
    if unsafe { libc::clock_gettime(clock, &mut time) } != 0 {
        return None;
    }
    Some(Duration::new(u64::try_from(time.tv_sec).ok()?, u32::try_from(time.tv_nsec).ok()?))
}

fn ticks_of(path: &str) -> Option<Duration> {
    let stat = std::fs::read_to_string(path).ok()?;
    // The command name is in parentheses and may hold spaces: count fields
    // from after its closing one, where field 3 (`state`) is index 0.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks = if ticks > 0 { ticks as u64 } else { 100 };
    Some(Duration::from_nanos((utime + stime) * 1_000_000_000 / ticks))
}

/// Resident memory of a process in KiB: (`VmRSS`, `VmHWM`), from
/// `/proc/<pid>/status`.
pub fn memory_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line[name.len()..].split_whitespace().next())
            .and_then(|value| value.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Context switches of a process, `(voluntary, involuntary)`: the sum over
/// its threads of `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches`
/// in `/proc/<pid>/task/<tid>/status` (`/proc/<pid>/status` has the main
/// thread's only). A thread that has exited is no longer in the sum; one
/// that exits while this reads is left out.
pub fn context_switches(pid: u32) -> Option<(u64, u64)> {
    let mut total = None;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else { continue };
        let field = |name: &str| {
            status.lines().find_map(|line| line.strip_prefix(name)).and_then(|value| value.trim().parse::<u64>().ok())
        };
        if let (Some(voluntary), Some(involuntary)) =
            (field("voluntary_ctxt_switches:"), field("nonvoluntary_ctxt_switches:"))
        {
            let (v, i) = total.unwrap_or((0, 0));
            total = Some((v + voluntary, i + involuntary));
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let pid = std::process::id();
        assert!(cpu_time(pid).is_some());
        assert!(own_cpu_time().is_some());
        let (rss, hwm) = memory_kib(pid).unwrap();
        assert!(rss > 0 && hwm >= rss, "{rss} {hwm}");
    }

    #[test]
    fn reads_another_process_cpu_to_below_a_tick() {
        // A child that only burns CPU, read until its clock ticks have
        // counted some: its CPU clock then says at least as much, to the
        // nanosecond rather than in whole ticks.
        let mut child = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let path = format!("/proc/{}/stat", child.id());
        let ticks = loop {
            let ticks = ticks_of(&path).unwrap();
            if !ticks.is_zero() {
                break ticks;
            }
            std::thread::yield_now();
        };
        let precise = cpu_time(child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        let precise = precise.unwrap();
        assert!(precise >= ticks, "{precise:?} against {ticks:?} in ticks");
        assert_ne!(precise.subsec_nanos() % 1_000_000, 0, "{precise:?} is in whole milliseconds");
    }

    #[test]
    fn counts_the_switches_of_a_sleeping_process() {
        // Other tests' threads come and go in this process: read a child
        // that does nothing but sleep, which switches out voluntarily.
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let switches = context_switches(child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        let (voluntary, _) = switches.unwrap();
        assert!(voluntary >= 1, "{switches:?}");
    }
}
