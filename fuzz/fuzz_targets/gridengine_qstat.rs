//! Grid Engine's queue: any bytes read as `qstat -u '*' -pri -xml`; none may panic, a job read
//! is either running or pending as its list says, and an error names where and what.
#![no_main]
use fairshare_gridengine::queue::parse_qstat;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_qstat(&text) {
        Ok(jobs) => {
            for job in jobs {
                assert!(!(job.running && job.orderable()), "{job:?}");
                assert!(job.id >= job.number, "{job:?}");
            }
        }
        Err(e) => assert!(!e.place.is_empty() && !e.expected.is_empty(), "{e:?}"),
    }
});
