//! Slurm's host lists (`n[01-03],gpu1`), expanded to the hosts they name: one reader for
//! `slurm.conf` and `scontrol show`, sacct's `NodeList` and `sacctmgr`'s events and
//! reservations, each with a bound on how many hosts a list may make.

/// The longest host name a host list may make, bytes (a DNS name is at most 253).
const LONGEST_HOST: usize = 255;

/// The most bracketed ranges one name of a host list may hold (`n[1-2]c[1-4]` holds 2).
const MOST_RANGES: usize = 8;

/// The hosts a Slurm host list names, in order: `n[01-03],gpu1` is `n01 n02 n03 gpu1`, with
/// the ranges' zero padding kept and several bracketed ranges in one name multiplied out.
/// Refused: a bracket left open, a range that falls or is not numbers, and a list naming more
/// than `most` hosts.
pub(crate) fn expand_hosts(list: &str, most: usize) -> Result<Vec<String>, String> {
    let mut hosts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    let bytes = list.as_bytes();
    for i in 0..=bytes.len() {
        match bytes.get(i) {
            Some(b'[') => depth += 1,
            Some(b']') => depth -= 1,
            Some(b',') | None if depth == 0 => {
                let name = &list[start..i];
                if !name.is_empty() {
                    expand_host(name, &mut hosts, most).map_err(|why| format!("{list}: {why}"))?;
                }
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(format!("{list}: a `]` closes no `[`"));
        }
    }
    if depth != 0 {
        return Err(format!("{list}: a `[` is left open"));
    }
    Ok(hosts)
}

/// Appends the hosts one name of a host list stands for: each of its bracketed ranges in turn
/// (at most [`MOST_RANGES`] of them, each host at most [`LONGEST_HOST`] bytes).
fn expand_host(name: &str, hosts: &mut Vec<String>, most: usize) -> Result<(), String> {
    if name.matches('[').count() > MOST_RANGES {
        return Err(format!(
            "a name holds more than {MOST_RANGES} bracketed ranges"
        ));
    }
    let Some(open) = name.find('[') else {
        if name.len() > LONGEST_HOST {
            return Err(format!("a host name is longer than {LONGEST_HOST} bytes"));
        }
        return push_host(hosts, name.to_owned(), most);
    };
    let close = open + name[open..].find(']').ok_or("a `[` is left open")?;
    let (prefix, rest) = (&name[..open], &name[close + 1..]);
    for range in name[open + 1..close].split(',') {
        let (low, high) = range.split_once('-').unwrap_or((range, range));
        let width = low.len();
        if width > LONGEST_HOST {
            return Err(format!("a host name is longer than {LONGEST_HOST} bytes"));
        }
        let (Ok(l), Ok(h)) = (low.parse::<u64>(), high.parse::<u64>()) else {
            return Err(format!("{range:?} is not a range of numbers"));
        };
        if l > h {
            return Err(format!("the range {range} falls"));
        }
        if h - l >= most as u64 {
            return Err(format!("names more than {most} hosts"));
        }
        for n in l..=h {
            expand_host(&format!("{prefix}{n:0width$}{rest}"), hosts, most)?;
        }
    }
    Ok(())
}

/// Adds one host, unless that makes more than `most`.
fn push_host(hosts: &mut Vec<String>, host: String, most: usize) -> Result<(), String> {
    if hosts.len() >= most {
        return Err(format!("names more than {most} hosts"));
    }
    hosts.push(host);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_lists_expand_and_bad_or_hostile_ones_are_refused() {
        assert_eq!(
            expand_hosts("a,b[1-3,7],c[0-1]d[1-2]", 100).unwrap(),
            ["a", "b1", "b2", "b3", "b7", "c0d1", "c0d2", "c1d1", "c1d2"]
        );
        assert_eq!(
            expand_hosts("n[08-10]", 100).unwrap(),
            ["n08", "n09", "n10"]
        );
        for bad in ["n[5-1]", "n[1-", "n]", "n[a-b]"] {
            assert!(expand_hosts(bad, 100).is_err(), "{bad}");
        }
        assert!(expand_hosts("n[1-1000000000000]", 100).is_err());
        assert!(expand_hosts("n[1-10][1-10]", 50).is_err());
        // Hostile lists fail fast: many ranges in one name, long names, wide padding.
        assert!(expand_hosts(&"n[1]".repeat(100_000), 100).is_err());
        assert!(expand_hosts(&format!("{}[1-9]", "x".repeat(300)), 100).is_err());
        assert!(expand_hosts(&format!("n[{}1-9]", "0".repeat(300)), 100).is_err());
    }
}
