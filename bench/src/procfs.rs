//! What `/proc` says about a process: CPU time and resident memory.

use std::time::Duration;

/// CPU time (user + system) the process has used, from `/proc/<pid>/stat`
/// (`utime` + `stime`, in clock ticks, usually 10 ms each).
pub fn cpu_time(pid: u32) -> Option<Duration> {
    cpu_time_of(&format!("/proc/{pid}/stat"))
}

/// CPU time of this process.
pub fn own_cpu_time() -> Option<Duration> {
    cpu_time_of("/proc/self/stat")
}

fn cpu_time_of(path: &str) -> Option<Duration> {
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
}
