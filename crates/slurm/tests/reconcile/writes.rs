//! Site factors written: applied and read back, a refused write retried, an ignored one found,
//! nothing written while the accounting is down.

use super::*;

#[test]
fn applied_writes_read_back_and_a_second_pass_or_a_restart_writes_nothing() {
    let fake = Fake::new();
    let mut adapter = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    let first = adapter.pass(now()).unwrap();
    let applied = adapter.apply(&first.plan);
    assert!(applied.complete(), "{applied:?}");
    assert_eq!((applied.calls, applied.jobs), (2, 2));
    assert_eq!(
        fake.writes(),
        [
            "scontrol update JobId=10 SiteFactor=167",
            "scontrol update JobId=8 SiteFactor=334",
        ]
    );
    let later = Time(now().as_micros() + 60_000_000);
    let second = adapter.pass(later).unwrap();
    assert!(
        second.rebuilt.is_none(),
        "the history is carried on, not rebuilt"
    );
    assert!(second.plan.writes.is_empty(), "{:?}", second.plan.writes);
    let mut restarted = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    let again = restarted.pass(later).unwrap();
    assert_eq!(again.plan.standings, second.plan.standings);
    assert!(again.plan.writes.is_empty());
}

#[test]
fn a_refused_write_is_retried_once_then_reported_not_applied() {
    let fake = Fake {
        writes: Writes::Refuse,
        ..Fake::new()
    };
    let mut adapter = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    let pass = adapter.pass(now()).unwrap();
    let applied = adapter.apply(&pass.plan);
    assert!(!applied.complete());
    assert_eq!(
        (applied.calls, applied.jobs, applied.refused.len()),
        (4, 0, 2)
    );
    assert!(applied.refused[0]
        .message
        .contains("Access/permission denied"));
    assert_eq!(applied.mismatched, [10, 8]);
}

#[test]
fn a_write_slurm_ignores_is_found_when_read_back() {
    let fake = Fake {
        writes: Writes::Ignore,
        ..Fake::new()
    };
    let mut adapter = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    let pass = adapter.pass(now()).unwrap();
    let applied = adapter.apply(&pass.plan);
    assert!(!applied.complete());
    assert_eq!(applied.mismatched, [10, 8]);
}

/// With the accounting down (`sacct` failing, slurmdbd stopped), a pass writes nothing, first
/// pass or not: no factor comes from a history it could not bring to now. Back up, the
/// history catches up and the factors it wrote stand.
#[test]
fn with_the_accounting_down_a_pass_writes_nothing() {
    let fake = Fake::new();
    let mut adapter = slurm_adapter(&fake, &config(FAIR_TREE)).unwrap();
    fake.down.set(Some("sacct"));
    let error = adapter.pass(now()).unwrap_err().to_string();
    assert!(error.contains("sacct"), "{error}");
    fake.down.set(None);
    let first = adapter.pass(now()).unwrap();
    assert!(adapter.apply(&first.plan).complete());
    let written = fake.writes().len();
    assert!(written > 0);
    fake.down.set(Some("sacct"));
    let later = Time(now().as_micros() + 60_000_000);
    let error = adapter.pass(later).unwrap_err();
    assert!(
        matches!(error, SlurmError::Answer(Unread::Command(_))),
        "{error}"
    );
    assert_eq!(fake.writes().len(), written, "nothing written while down");
    fake.down.set(None);
    let back = adapter.pass(later).unwrap();
    assert_eq!(back.rebuilt, None, "the history kept, brought to now");
    assert!(back.plan.writes.is_empty(), "{:?}", back.plan.writes);
}
