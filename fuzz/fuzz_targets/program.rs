//! Program files (`program_file`) and program bodies in the paper's syntax.
#![no_main]
use fairshare_sim::scenario::{parse_program_file, Program};

/// Every request of an accepted program has a finite, non-negative mean and width.
fn sound(program: &Program) {
    for block in &program.blocks {
        for request in &block.requests {
            assert!(request.mean.is_finite() && request.mean >= 0.0, "{request:?}");
            assert!(request.width.is_finite() && request.width >= 0.0, "{request:?}");
        }
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(program) = Program::parse(text) {
        sound(&program);
    }
    if let Ok((priority, program)) = parse_program_file(text) {
        assert!(priority.is_finite() && priority > 0.0);
        sound(&program);
    }
});
