#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| celerity_fuzz::targets::event::run(data));
