//! Heap allocations of a handler process, counted in the process and read by
//! the harness whenever it likes, with no word from the process.
//!
//! Both handler binaries install [`Counting`] as their global allocator:
//! [`System`], plus two relaxed atomic adds per allocation (one for the call,
//! one for its bytes), into a slot of the thread's own: one shared pair of
//! counters would be a cache line bounced between the threads of (A) on
//! every allocation, a cost (B), with its one thread, never pays, and one
//! that showed in (A)'s profile. The counters start in this process's memory. When the
//! harness names a file in [`COUNTERS_ENV`], [`attach_from_env`] maps it
//! shared and the counters move into it, so the harness reads them from its
//! own mapping of the same page ([`CounterFile`]) at the start and at the end
//! of the measured phase: no signal, no thread, no write per event beyond
//! the adds.
//!
//! Counted: every `alloc`, `alloc_zeroed` and `realloc` (a `realloc` may
//! move the block, and it is a call into the allocator like the others),
//! with the bytes asked for (for `realloc`, the new size). Frees are not
//! counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// The environment variable naming the file the counters live in.
pub const COUNTERS_ENV: &str = "BENCH_ALLOC_COUNTERS";

/// The size of that file: one page.
const FILE_LEN: usize = 4096;

/// How many threads count apart; more share slots, round robin.
const SLOTS: usize = 32;

/// One thread's counts, a cache line of its own.
#[repr(C, align(64))]
struct Slot {
    /// Calls to `alloc`, `alloc_zeroed` and `realloc`.
    allocations: AtomicU64,
    /// Bytes they asked for.
    bytes: AtomicU64,
}

/// The counters, as laid out at the start of the file.
#[repr(C, align(64))]
pub struct Counters {
    /// The id of the process that attached, 0 until one did.
    pid: AtomicU64,
    slots: [Slot; SLOTS],
}

impl Counters {
    const fn new() -> Counters {
        Counters {
            pid: AtomicU64::new(0),
            slots: [const { Slot { allocations: AtomicU64::new(0), bytes: AtomicU64::new(0) } }; SLOTS],
        }
    }

    fn count(&self, bytes: usize) {
        let slot = &self.slots[slot()];
        slot.allocations.fetch_add(1, Relaxed);
        slot.bytes.fetch_add(bytes as u64, Relaxed);
    }

    /// The sums over every slot.
    fn total(&self) -> AllocCount {
        self.slots.iter().fold(AllocCount::default(), |sum, slot| AllocCount {
            allocations: sum.allocations + slot.allocations.load(Relaxed),
            bytes: sum.bytes + slot.bytes.load(Relaxed),
        })
    }

    /// Starts over from `from`'s counts, in the first slot.
    fn carry_over(&self, from: &Counters) {
        let total = from.total();
        self.slots[0].allocations.store(total.allocations, Relaxed);
        self.slots[0].bytes.store(total.bytes, Relaxed);
    }
}

/// The next slot to give a thread that has none.
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Constant-initialised and without a destructor: a plain thread-local
    // word, which the allocator may touch (it neither allocates nor
    // registers anything).
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The calling thread's slot.
fn slot() -> usize {
    SLOT.with(|slot| {
        if slot.get() == usize::MAX {
            slot.set(NEXT_SLOT.fetch_add(1, Relaxed) % SLOTS);
        }
        slot.get()
    })
}

const _: () = assert!(size_of::<Counters>() <= FILE_LEN);

/// Where the counts go before [`attach_from_env`], and when it finds no file.
static LOCAL: Counters = Counters::new();

/// The counters in use: [`LOCAL`], then the mapped file's. Never freed.
static COUNTERS: AtomicPtr<Counters> = AtomicPtr::new(&raw const LOCAL as *mut Counters);

fn counters() -> &'static Counters {
    // SAFETY: COUNTERS points at LOCAL or at a shared mapping of FILE_LEN
    // bytes that is never unmapped; both are valid for 'static.
    unsafe { &*COUNTERS.load(Relaxed) }
}

/// The global allocator of both handler binaries: [`System`], counted.
///
/// ```text
/// #[global_allocator]
/// static ALLOCATOR: celerity_bench::alloc::Counting = celerity_bench::alloc::Counting;
/// ```
pub struct Counting;

// SAFETY: every call is handed to `System` unchanged; counting touches no
// memory the caller sees and does not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        counters().count(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        counters().count(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        counters().count(new_size);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Maps `FILE_LEN` bytes of `file` shared, read and write.
fn map(file: &File) -> io::Result<*mut Counters> {
    // SAFETY: a fresh mapping of an open file at no fixed address; the
    // result is checked.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            FILE_LEN,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if ptr == libc::MAP_FAILED { Err(io::Error::last_os_error()) } else { Ok(ptr.cast()) }
}

/// In a handler process, first thing in `main`: moves the counters into the
/// file [`COUNTERS_ENV`] names, if it names one, carrying over what was
/// counted so far. Without the variable the process counts for nobody; when
/// the file cannot be mapped it says so on stderr and the harness reports
/// the allocations as not counted.
pub fn attach_from_env() {
    let Some(path) = std::env::var_os(COUNTERS_ENV) else { return };
    if let Err(error) = attach(&path) {
        eprintln!("{COUNTERS_ENV}={}: allocations not counted: {error}", Path::new(&path).display());
    }
}

fn attach(path: &OsStr) -> io::Result<()> {
    let file = OpenOptions::new().read(true).write(true).open(path)?;
    if file.metadata()?.len() < FILE_LEN as u64 {
        return Err(io::Error::other(format!("shorter than {FILE_LEN} bytes")));
    }
    // SAFETY: the mapping is FILE_LEN bytes, page-aligned, and holds a
    // `Counters` (atomics, valid at any bit pattern) at its start. It is
    // never unmapped: the allocator may use it until the process ends.
    let mapped = unsafe { &*map(&file)? };
    mapped.carry_over(&LOCAL);
    COUNTERS.store(std::ptr::from_ref(mapped).cast_mut(), Relaxed);
    mapped.pid.store(u64::from(std::process::id()), Relaxed);
    Ok(())
}

/// Allocations counted so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocCount {
    /// Calls to `alloc`, `alloc_zeroed` and `realloc`.
    pub allocations: u64,
    /// Bytes they asked for.
    pub bytes: u64,
}

/// The harness's end of one handler process's counters: a zeroed file of its
/// own, mapped shared.
pub struct CounterFile {
    path: PathBuf,
    counters: *mut Counters,
}

impl CounterFile {
    /// Creates (or empties) the file at `path` and maps it.
    pub fn create(path: &Path) -> io::Result<CounterFile> {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
        file.set_len(FILE_LEN as u64)?;
        Ok(CounterFile { path: path.to_path_buf(), counters: map(&file)? })
    }

    /// The path to give the handler in [`COUNTERS_ENV`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the process has counted, or `None` when no process attached.
    pub fn read(&self) -> Option<AllocCount> {
        // SAFETY: a live mapping of FILE_LEN bytes (unmapped only on drop)
        // with a `Counters` at its start.
        let counters = unsafe { &*self.counters };
        if counters.pid.load(Relaxed) == 0 {
            return None;
        }
        Some(counters.total())
    }
}

impl Drop for CounterFile {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `create`, not used after this.
        unsafe { libc::munmap(self.counters.cast(), FILE_LEN) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_reads_as_not_counted_until_a_process_attaches() {
        let dir = std::env::temp_dir().join(format!("celerity-bench-alloc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("counters");
        let file = CounterFile::create(&path).unwrap();
        assert_eq!(file.read(), None);

        // Another mapping of the same file, as the handler makes: what it
        // counts is what the harness reads.
        let other = OpenOptions::new().read(true).write(true).open(&path).unwrap();
        // SAFETY: as in `attach`; unmapped below.
        let theirs = unsafe { &*map(&other).unwrap() };
        theirs.pid.store(1, Relaxed);
        theirs.count(24);
        theirs.count(1000);
        // Another thread counts in a slot of its own; the harness reads the sum.
        std::thread::scope(|scope| {
            scope.spawn(|| theirs.count(3000));
        });
        assert_eq!(file.read(), Some(AllocCount { allocations: 3, bytes: 4024 }));
        // SAFETY: the mapping made above, not used after this.
        unsafe { libc::munmap(std::ptr::from_ref(theirs).cast_mut().cast(), FILE_LEN) };
        drop(file);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
