//! The OpenPBS adapter driven through the library on the recorded outputs: a full pass, a
//! failed pass, a reset; and its readers on what OpenPBS prints.

use crate::jobs::{self, PbsId};
use crate::recorded::{path, Server, NOW};
use crate::{adapter, groups, read, PbsDefaults, PbsIo};
use fairshare_reconcile::config::SharedKeys;
use fairshare_reconcile::controller::Controller;

/// The adapter under its defaults (Fair Tree, weight 1000) on a fresh stand-in server.
fn controller() -> Controller<PbsIo<Server>> {
    let config = SharedKeys::<PbsDefaults>::default();
    adapter(Server::new(), &config, path("resource_group")).unwrap()
}

/// Every `qalter` the server took.
fn altered(controller: &Controller<PbsIo<Server>>) -> Vec<String> {
    controller.io().commands.inner().altered.borrow().clone()
}

#[test]
fn a_pass_ranks_the_waiting_users_and_qalter_gives_their_jobs_priorities() {
    let mut controller = controller();
    let pass = controller.pass(NOW).unwrap();
    let order: Vec<&str> = pass
        .plan
        .standings
        .iter()
        .map(|s| s.user.as_str())
        .collect();
    // cy's chemistry never ran; in physics, ben's 8 CPUs for 2 h weigh less than ana's 16
    // for 10 h yesterday.
    assert_eq!(order, ["cy", "ben", "ana"]);
    assert_eq!(pass.reads, 2, "pbsnodes and qstat -x (the tree is a file)");
    let alone: Vec<(String, String)> = (pass.plan.jobs.iter())
        .filter(|j| j.wanted.is_none())
        .map(|j| (j.id.to_string(), j.note.clone().unwrap()))
        .collect();
    assert_eq!(alone.len(), 3, "{alone:?}");
    assert_eq!(alone[0].0, "104.pbs-head", "zed is in no group of the tree");
    assert!(alone[0].1.contains("no such association"), "{alone:?}");
    assert_eq!(alone[1].0, "105.pbs-head", "held");
    assert_eq!(alone[2].0, "106.pbs-head", "lowered by its owner");
    let applied = controller.apply(&pass.plan);
    assert!(applied.complete() && applied.jobs == 3, "{applied:?}");
    assert_eq!(
        altered(&controller),
        [
            "qalter -p 333 101.pbs-head",
            "qalter -p 667 102.pbs-head",
            "qalter -p 1000 103.pbs-head"
        ]
    );
    let again = controller.pass(NOW).unwrap();
    assert!(
        again.plan.writes.is_empty(),
        "what qstat now prints is what was wanted"
    );
}

#[test]
fn a_pass_with_the_server_down_fails_naming_the_command_and_the_next_one_passes() {
    let mut controller = controller();
    controller.io().commands.inner().down.set(true);
    let error = controller.pass(NOW).unwrap_err();
    assert!(
        error.to_string().starts_with("pbsnodes -a -F json: "),
        "{error}"
    );
    assert!(altered(&controller).is_empty());
    controller.io().commands.inner().down.set(false);
    let pass = controller.pass(NOW).unwrap();
    assert_eq!(pass.plan.writes.len(), 3);
}

#[test]
fn reset_gives_every_priority_fairshare_wrote_back_0_and_leaves_the_owners() {
    let mut controller = controller();
    let pass = controller.pass(NOW).unwrap();
    controller.apply(&pass.plan);
    let reset = controller.reset_plan().unwrap();
    let applied = controller.apply(&reset);
    assert!(applied.complete() && applied.jobs == 3, "{applied:?}");
    assert_eq!(
        altered(&controller)[3..],
        ["qalter -p 0 101.pbs-head 102.pbs-head 103.pbs-head"]
    );
    let qstat = controller.io().commands.inner().qstat(false);
    let queue = jobs::queue(&qstat).unwrap();
    let held: Vec<(u64, Option<i64>)> = queue.iter().map(|j| (j.id.number, j.held)).collect();
    // 101–104 are back at 0; 105 is held, 106's owner lowered its priority, 95 runs.
    let zero = Some(0);
    let expected = [
        (101, zero),
        (102, zero),
        (103, zero),
        (104, zero),
        (105, None),
        (106, None),
        (95, None),
    ];
    assert_eq!(held, expected);
    assert!(
        qstat.contains("\"Priority\":-10"),
        "106's owner's priority is its own"
    );
}

#[test]
fn a_weight_openpbs_cannot_hold_is_refused_naming_the_bound() {
    let mut config = SharedKeys::<PbsDefaults>::default();
    config.weight = 2_000;
    let error = adapter(Server::new(), &config, path("resource_group"))
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "weight must lie in [1, 1023] (OpenPBS holds a Priority in [-1024, 1023]), found 2000"
    );
}

#[test]
fn job_ids_order_by_their_number_and_print_as_openpbs_does() {
    let nine = PbsId::parse("9.pbs-head").unwrap();
    let ten = PbsId::parse("10.pbs-head").unwrap();
    assert!(nine < ten, "not as text, where 10 comes first");
    assert_eq!(
        PbsId::parse("12[3].pbs-head").unwrap().to_string(),
        "12[3].pbs-head"
    );
    assert_eq!(PbsId::parse("pbs-head"), None);
    assert_eq!(serde_json::to_string(&ten).unwrap(), "\"10.pbs-head\"");
}

#[test]
fn the_readers_say_what_they_could_not_read() {
    let text = std::fs::read_to_string(path("qstat-x.json")).unwrap();
    let bad = text.replacen("Mon Nov 30 11:00:00 2026", "yesterday", 1);
    let error = jobs::queue(&bad).unwrap_err().to_string();
    assert!(
        error.starts_with("101.pbs-head: ctime is \"yesterday\", expected"),
        "{error}"
    );
    assert!(jobs::queue("{\"Jobs\": 3}").is_err());
    let error = groups::tree("physics 10 root 60\nana 11 biology 1\n").unwrap_err();
    assert_eq!(
        error.to_string(),
        "resource_group line 2: parent is \"biology\", expected a group on an earlier line, or root"
    );
    assert_eq!(read::kb("8gb"), Some(8.0 * 1024.0 * 1024.0));
    assert_eq!(read::seconds("01:30:00"), Some(5_400));
}
