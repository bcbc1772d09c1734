//! What `sacct` may list that the history must not trip on: a job id listed twice (ids
//! reset), a job that ran no time, a running job whose end comes too late to be listed.

use super::recorded;
use fairshare_core::model::Time;
use fairshare_reconcile::clients::Clients;
use fairshare_reconcile::history::History;
use fairshare_reconcile::machines::Machines;
use fairshare_slurm::accounting::Allocation;
use fairshare_slurm::assoc::parse_assoc;
use fairshare_slurm::clients::clients;
use fairshare_slurm::nodes::parse_nodes;

fn secs(s: u64) -> Time {
    Time::from_micros(s * 1_000_000)
}

fn job(id: u64, start: u64, end: Option<u64>) -> Allocation {
    Allocation {
        id,
        user: "u1".into(),
        account: "physics".into(),
        partition: "main".into(),
        submit: secs(start),
        start: secs(start),
        end: end.map(secs),
        demand: vec![2.0, 0.0, 0.0],
        nodes: Some(1),
        qos: "normal".into(),
        billing: 2.0,
    }
}

fn history() -> (History, Clients, Machines) {
    let clients = clients(&parse_assoc(&recorded("sacctmgr.txt")).unwrap(), None).unwrap();
    let machines = Machines::of(&parse_nodes(&recorded("sinfo.json")).unwrap(), &[]).unwrap();
    let policy = "sdrf".parse().unwrap();
    (
        History::new(&policy, &clients, &machines, secs(0)).unwrap(),
        clients,
        machines,
    )
}

#[test]
fn an_id_listed_twice_starts_once() {
    let (mut history, clients, machines) = history();
    let twice = [job(7, 10, None), job(7, 20, None)];
    let step = history
        .record(&twice, &clients, &machines, secs(30))
        .unwrap();
    assert_eq!((step.started, history.running()), (1, 1));
}

#[test]
fn a_job_that_ran_no_time_is_never_held() {
    let (mut history, clients, machines) = history();
    let step = history
        .record(&[job(8, 10, Some(10))], &clients, &machines, secs(30))
        .unwrap();
    assert_eq!((step.started, history.running()), (0, 0));
    let u1 = clients.client("physics", "u1").unwrap();
    assert_eq!(history.holdings(u1), &[0.0, 0.0]);
}

#[test]
fn a_running_job_no_longer_listed_ends_at_the_last_pass() {
    let (mut history, clients, machines) = history();
    history
        .record(&[job(9, 10, None)], &clients, &machines, secs(30))
        .unwrap();
    let step = history.record(&[], &clients, &machines, secs(90)).unwrap();
    assert_eq!((step.unlisted, step.ended, history.running()), (1, 1, 0));
    let u1 = clients.client("physics", "u1").unwrap();
    assert_eq!(
        history.counted(u1),
        2.0 * 20.0,
        "charged from 10 s to the last pass, 30 s"
    );
}
