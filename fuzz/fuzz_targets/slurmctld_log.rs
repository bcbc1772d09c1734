//! `slurmctld`'s log: any bytes read as the controller's log; none may panic, an error names a
//! line, the main scheduler's turns come out in order, each once; the loop's turn found for
//! any moment is at or after it and is itself a turn; and a dump's job timed by the log keeps
//! its submission, start and end in order.
#![no_main]
use fairshare_core::model::{Task, Time};
use fairshare_sim::cluster::LoopTurns;
use fairshare_trace::slurm_output::ReadError;
use fairshare_trace::slurmctld_log::{parse_controller_log, Timed};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let log = match parse_controller_log(&text) {
        Ok(log) => log,
        Err(ReadError::Field { record, .. }) => {
            assert!(record.starts_with("line "), "{record}");
            return;
        }
        Err(other) => panic!("not about a line: {other}"),
    };
    assert!(log.main_passes.windows(2).all(|w| w[0] < w[1]), "{:?}", log.main_passes);
    let turns = LoopTurns::every_second(log.main_passes.clone());
    let moments = log.jobs.values().flat_map(|m| [m.submitted, m.started, m.ended]);
    for t in moments.flatten() {
        let turn = turns.at_or_after(t);
        assert!(turn >= t && turns.at_or_after(turn) == turn, "{t:?} gave {turn:?}");
    }
    for (&id, moments) in &log.jobs {
        let whole = |t: Option<Time>| t.map(|t| Time::from_micros(t.as_micros() / 1_000_000 * 1_000_000));
        let submit = whole(moments.submitted).unwrap_or(Time::ZERO);
        let start = whole(moments.started).filter(|s| *s >= submit);
        let end = whole(moments.ended).unwrap_or(Time::from_micros(u64::MAX / 2));
        let mut task = Task::new(id, 0, submit, 0, vec![1.0]);
        task.start = start;
        task.runtime = start.map_or(0, |s| end.as_micros().saturating_sub(s.as_micros()));
        log.time(id, &mut task, &mut Timed::default());
        if let Some(start) = task.start {
            assert!(task.submit <= start, "{task:?}");
        }
    }
});
