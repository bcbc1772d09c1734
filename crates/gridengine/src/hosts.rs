//! The cluster's execution hosts as the reconcile's nodes: each host's slots, summed over the
//! queue instances on it (`qstat -f -xml`: a slot is what a job's processor is in Grid Engine),
//! and its memory (`qhost -xml`'s `mem_total`). A host's cluster queues are its partitions.

use crate::OutputError;
use fairshare_reconcile::machines::SchedulerNode;
use std::collections::BTreeMap;

/// The command that lists the queue instances and their slots.
pub const QUEUES_COMMAND: [&str; 3] = ["qstat", "-f", "-xml"];
/// The command that lists the hosts and their memory.
pub const HOSTS_COMMAND: [&str; 2] = ["qhost", "-xml"];

/// The nodes of `qstat -f -xml` (`queues`) and `qhost -xml` (`hosts`), by host name.
pub fn parse_nodes(queues: &str, hosts: &str) -> Result<Vec<SchedulerNode>, OutputError> {
    let mut nodes: BTreeMap<String, SchedulerNode> = BTreeMap::new();
    let queues = xml(queues, "qstat -f")?;
    for instance in queues
        .descendants()
        .filter(|n| n.has_tag_name("Queue-List"))
    {
        let name = child(instance, "name");
        let (queue, host) = name.split_once('@').unwrap_or((name, ""));
        let place = format!("queue instance {name}");
        let slots: u32 = crate::number(
            child(instance, "slots_total"),
            &place,
            "slots_total",
            "a whole number of slots",
        )?;
        let node = nodes
            .entry(host.to_string())
            .or_insert_with(|| SchedulerNode {
                name: host.to_string(),
                cpus: 0,
                memory_kb: 0,
                gpus: 0,
                features: Vec::new(),
                partitions: Vec::new(),
            });
        node.cpus += slots;
        node.partitions.push(queue.to_string());
    }
    let hosts = xml(hosts, "qhost")?;
    for host in hosts.descendants().filter(|n| n.has_tag_name("host")) {
        let Some(node) = host.attribute("name").and_then(|h| nodes.get_mut(h)) else {
            continue;
        };
        let value = host
            .children()
            .find(|v| v.attribute("name") == Some("mem_total"))
            .and_then(|v| v.text())
            .unwrap_or("-");
        let place = format!("host {}", node.name);
        node.memory_kb = kilobytes(value)
            .ok_or_else(|| OutputError::new(place, "mem_total", "a size such as 23.5G", value))?;
    }
    Ok(nodes.into_values().collect())
}

/// The document of `command`'s XML output.
fn xml<'a>(text: &'a str, command: &str) -> Result<roxmltree::Document<'a>, OutputError> {
    roxmltree::Document::parse(text).map_err(|e| {
        OutputError::new(
            format!("{command}'s XML"),
            "document",
            "well-formed XML",
            &e.to_string(),
        )
    })
}

/// The text of `node`'s child `name` ("" if none).
fn child<'a>(node: roxmltree::Node<'a, '_>, name: &str) -> &'a str {
    node.children()
        .find(|c| c.has_tag_name(name))
        .and_then(|c| c.text())
        .unwrap_or("")
}

/// KB of a size as `qhost` prints it (`23.5G`, `632.8M`, `0.0`).
fn kilobytes(text: &str) -> Option<u64> {
    let (number, unit) = match text.char_indices().last()? {
        (at, c) if c.is_ascii_alphabetic() => (&text[..at], c),
        _ => (text, 'B'),
    };
    let scale = match unit.to_ascii_uppercase() {
        'B' => 1.0 / 1024.0,
        'K' => 1.0,
        'M' => 1024.0,
        'G' => 1024.0 * 1024.0,
        'T' => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let value: f64 = number.parse().ok()?;
    (value.is_finite() && value >= 0.0).then(|| (value * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUEUES: &str = "<?xml version='1.0'?>\n<job_info><queue_info>\n<Queue-List><name>all.q@vm</name><qtype>BI</qtype><slots_used>8</slots_used><slots_resv>0</slots_resv><slots_total>8</slots_total></Queue-List>\n<Queue-List><name>long.q@vm</name><slots_total>4</slots_total></Queue-List>\n</queue_info><job_info></job_info></job_info>";
    const HOSTS: &str = "<?xml version='1.0'?>\n<qhost><host name='global'><hostvalue name='mem_total'>-</hostvalue></host><host name='vm'><hostvalue name='num_proc'>2</hostvalue><hostvalue name='mem_total'>23.5G</hostvalue></host></qhost>";

    #[test]
    fn a_hosts_slots_are_summed_over_its_queues() {
        let nodes = parse_nodes(QUEUES, HOSTS).unwrap();
        assert_eq!(nodes.len(), 1);
        assert_eq!((nodes[0].name.as_str(), nodes[0].cpus), ("vm", 12));
        assert_eq!(nodes[0].partitions, ["all.q", "long.q"]);
        assert_eq!(nodes[0].memory_kb, 24_641_536);
    }

    #[test]
    fn sizes_read_as_qhost_prints_them() {
        assert_eq!(kilobytes("632.8M"), Some(647_987));
        assert_eq!(kilobytes("2048"), Some(2));
        assert_eq!(kilobytes("-"), None);
        let e = parse_nodes(QUEUES, &HOSTS.replace("23.5G", "lots")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "host vm: mem_total: expected a size such as 23.5G, found \"lots\""
        );
    }
}
