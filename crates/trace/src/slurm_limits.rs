//! A Slurm site's limits, as `sacctmgr` lists them: the associations' (`GrpTRES`, `GrpJobs`,
//! `MaxJobs`, …), the QOS' (`MaxTRESPU`, `MaxJobsPU`, `GrpTRES`, …), and their changes over a
//! window (`sacctmgr list transactions`). Sites hold jobs back with these as much as with any
//! priority, so a replay of a site's month has to know them; every value is read from a named
//! column of a line, and the errors say which.
//!
//! The three outputs are read with their header (`sacctmgr -P`, without `-n`), each column
//! found by the name `sacctmgr` prints for it, so that a version that adds or moves columns
//! still reads. A limit that is set but that a replay does not hold is kept in `unheld`, by
//! name, for the caller to say so.

use crate::slurm_output::{lines, Problem, ReadError};
use crate::tres::{tres_amounts, Tres};
use fairshare_core::model::Time;

/// The format of the associations' limits a bundle holds (`sacctmgr -P show assoc
/// format=…`).
pub const ASSOC_FORMAT: &str = "Cluster,Account,User,Partition,ParentName,GrpTRES,GrpJobs,\
GrpSubmitJobs,GrpTRESMins,GrpTRESRunMins,GrpWall,MaxJobs,MaxSubmitJobs,MaxTRES,MaxTRESPerNode,\
MaxTRESMins,MaxWallDurationPerJob,QOS";

/// The format of the QOS' limits a bundle holds (`sacctmgr -P show qos format=…`).
pub const QOS_FORMAT: &str = "Name,MaxTRESPerUser,MaxJobsPerUser,MaxSubmitJobsPerUser,\
MaxTRESPerAccount,MaxJobsPerAccount,GrpTRES,GrpJobs,MaxTRES,MaxWall,Flags";

/// Caps on TRES: an amount for each kind named, in the units of [`tres_amounts`].
pub type TresCaps = Vec<(Tres, f64)>;

/// The caps a replay holds, of one association or QOS (or one change of them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Caps {
    /// What its (or, for a QOS, each of its users' or accounts') running jobs may hold.
    pub tres: TresCaps,
    /// How many jobs may run at once.
    pub jobs: Option<u64>,
}

/// One association's limits.
#[derive(Debug, Clone, PartialEq)]
pub struct AssocLimits {
    /// Its line in the file.
    pub line: usize,
    /// Its cluster.
    pub cluster: String,
    /// Its account.
    pub account: String,
    /// Its user, for a user's association.
    pub user: Option<String>,
    /// Its partition, when it is a partition's.
    pub partition: Option<String>,
    /// An account's parent account.
    pub parent: Option<String>,
    /// `GrpTRES` and `GrpJobs`: what all the jobs under it may hold.
    pub group: Caps,
    /// `MaxJobs`: how many jobs of each user under it may run (a user's own, or the one its
    /// account sets for the users beneath that set none).
    pub max_jobs: Option<u64>,
    /// The limits it sets that a replay does not hold, as `Name=value`.
    pub unheld: Vec<String>,
}

/// One QOS' limits.
#[derive(Debug, Clone, PartialEq)]
pub struct QosLimits {
    /// Its line in the file.
    pub line: usize,
    /// Its name.
    pub name: String,
    /// `MaxTRESPU` and `MaxJobsPU`: what each user's running jobs in it may hold.
    pub per_user: Caps,
    /// `MaxTRESPA` and `MaxJobsPA`: what each account's running jobs in it may hold.
    pub per_account: Caps,
    /// `GrpTRES` and `GrpJobs`: what all its running jobs may hold.
    pub group: Caps,
    /// Its flags (`DenyOnLimit`, `OverPartQOS`, …).
    pub flags: Vec<String>,
    /// The limits it sets that a replay does not hold, as `Name=value`.
    pub unheld: Vec<String>,
}

/// What a change of limits applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// The association of this account (and user, for a user's).
    Assoc {
        /// Its account.
        account: String,
        /// Its user, for a user's association.
        user: Option<String>,
    },
    /// The QOS of this name.
    Qos(String),
}

/// Which limit a change sets, and to what (`None`: unset).
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    /// `grp_tres`.
    GroupTres(TresCaps),
    /// `grp_jobs`.
    GroupJobs(Option<u64>),
    /// `max_jobs`.
    MaxJobs(Option<u64>),
    /// `max_tres_pu`.
    UserTres(TresCaps),
    /// `max_jobs_per_user`.
    UserJobs(Option<u64>),
    /// `max_tres_pa`.
    AccountTres(TresCaps),
    /// `max_jobs_pa`.
    AccountJobs(Option<u64>),
}

/// One limit set at one moment, as `sacctmgr list transactions` records it.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitChange {
    /// Its line in the file.
    pub line: usize,
    /// When.
    pub at: Time,
    /// Of what.
    pub of: Changed,
    /// What it set.
    pub setting: Setting,
}

/// A `|`-separated output with a header: each line's fields, found by column name.
pub(crate) struct Table<'t> {
    /// The header's column names.
    header: Vec<&'t str>,
    /// Each line: its name for errors, its number and its fields.
    pub(crate) rows: Vec<(String, usize, Vec<&'t str>)>,
}

impl<'t> Table<'t> {
    /// The table of `text`, its first non-blank line the header.
    pub(crate) fn of(text: &'t str) -> Table<'t> {
        let mut lines = lines(text);
        let header = lines
            .next()
            .map_or(Vec::new(), |(_, l)| l.split('|').collect());
        let rows = lines
            .map(|(name, line)| {
                let number = name.trim_start_matches("line ").parse().unwrap_or(0);
                (name, number, line.split('|').collect())
            })
            .collect();
        Table { header, rows }
    }

    /// The index of the first of `names` the header has.
    pub(crate) fn column(&self, names: &[&str]) -> Option<usize> {
        (self.header.iter()).position(|h| names.iter().any(|n| h.trim().eq_ignore_ascii_case(n)))
    }

    /// The index of the column `names` name, or the error saying it is missing.
    pub(crate) fn needed(&self, names: &[&'static str]) -> Result<usize, ReadError> {
        self.column(names)
            .ok_or_else(|| ReadError::field_of("line 1 (the header)", names[0], Problem::Missing))
    }
}

/// A row's field at `column` (empty when the column or the field is absent), trimmed.
pub(crate) fn field<'t>(row: &[&'t str], column: Option<usize>) -> &'t str {
    column.and_then(|c| row.get(c)).map_or("", |f| f.trim())
}

/// A count limit (`4`; empty: none).
fn count(record: &str, name: &'static str, text: &str) -> Result<Option<u64>, ReadError> {
    match text {
        "" => Ok(None),
        text => text.parse().map(Some).map_err(|_| {
            ReadError::field_of(
                record,
                name,
                Problem::Invalid(format!("{text:?} is not a whole number of jobs")),
            )
        }),
    }
}

/// A TRES limit (`cpu=64,gres/gpu=4`; empty: none).
fn tres(record: &str, name: &'static str, text: &str) -> Result<TresCaps, ReadError> {
    tres_amounts(text).map_err(|expected| {
        ReadError::field_of(
            record,
            name,
            Problem::Invalid(format!("{text:?}: {expected} were expected")),
        )
    })
}

/// The names of the columns of limits a replay does not hold, each with the names `sacctmgr`
/// may print for it.
const ASSOC_UNHELD: [&[&str]; 9] = [
    &["GrpSubmit", "GrpSubmitJobs"],
    &["GrpTRESMins"],
    &["GrpTRESRunMins"],
    &["GrpWall"],
    &["MaxSubmit", "MaxSubmitJobs"],
    &["MaxTRES"],
    &["MaxTRESPerNode", "MaxTRESPN"],
    &["MaxTRESMins", "MaxTRESMinsPerJob"],
    &["MaxWall", "MaxWallDurationPerJob"],
];

/// The QOS columns of limits a replay does not hold.
const QOS_UNHELD: [&[&str]; 3] = [
    &["MaxSubmitPU", "MaxSubmitJobsPerUser"],
    &["MaxTRES", "MaxTRESPerJob"],
    &["MaxWall", "MaxWallDurationPerJob"],
];

/// The limits set in `row` under the columns `unheld`, as `Name=value`.
fn unheld(table: &Table, row: &[&str], columns: &[&[&str]]) -> Vec<String> {
    let set = columns.iter().filter_map(|names| {
        let value = field(row, table.column(names));
        (!value.is_empty()).then(|| format!("{}={value}", names[0]))
    });
    set.collect()
}

/// The associations' limits in `text`, the output of `sacctmgr -P show assoc
/// format=`[`ASSOC_FORMAT`] (its header first).
pub fn read_assoc_limits(text: &str) -> Result<Vec<AssocLimits>, ReadError> {
    let table = Table::of(text);
    let (account, user) = (table.needed(&["Account"])?, table.needed(&["User"])?);
    let (cluster, partition) = (table.column(&["Cluster"]), table.column(&["Partition"]));
    let parent = table.column(&["ParentName", "Par Name"]);
    let (grp_tres, grp_jobs) = (table.column(&["GrpTRES"]), table.column(&["GrpJobs"]));
    let max_jobs = table.column(&["MaxJobs"]);
    let mut read = Vec::with_capacity(table.rows.len());
    for (record, line, row) in &table.rows {
        let optional = |text: &str| Some(text.to_owned()).filter(|t| !t.is_empty());
        read.push(AssocLimits {
            line: *line,
            cluster: field(row, cluster).to_owned(),
            account: field(row, Some(account)).to_owned(),
            user: optional(field(row, Some(user))),
            partition: optional(field(row, partition)),
            parent: optional(field(row, parent)),
            group: Caps {
                tres: tres(record, "GrpTRES", field(row, grp_tres))?,
                jobs: count(record, "GrpJobs", field(row, grp_jobs))?,
            },
            max_jobs: count(record, "MaxJobs", field(row, max_jobs))?,
            unheld: unheld(&table, row, &ASSOC_UNHELD),
        });
    }
    Ok(read)
}

/// The QOS' limits in `text`, the output of `sacctmgr -P show qos format=`[`QOS_FORMAT`]
/// (its header first).
pub fn read_qos_limits(text: &str) -> Result<Vec<QosLimits>, ReadError> {
    let table = Table::of(text);
    let name = table.needed(&["Name"])?;
    let column = |names: &[&str]| table.column(names);
    let (user_tres, user_jobs) = (
        column(&["MaxTRESPU", "MaxTRESPerUser"]),
        column(&["MaxJobsPU", "MaxJobsPerUser"]),
    );
    let (account_tres, account_jobs) = (
        column(&["MaxTRESPA", "MaxTRESPerAccount"]),
        column(&["MaxJobsPA", "MaxJobsPerAccount"]),
    );
    let (grp_tres, grp_jobs, flags) = (
        column(&["GrpTRES"]),
        column(&["GrpJobs"]),
        column(&["Flags"]),
    );
    let mut read = Vec::with_capacity(table.rows.len());
    for (record, line, row) in &table.rows {
        let caps = |tres_at, tres_name, jobs_at, jobs_name| -> Result<Caps, ReadError> {
            Ok(Caps {
                tres: tres(record, tres_name, field(row, tres_at))?,
                jobs: count(record, jobs_name, field(row, jobs_at))?,
            })
        };
        let flags = field(row, flags)
            .split(',')
            .map(str::trim)
            .filter(|f| !f.is_empty());
        read.push(QosLimits {
            line: *line,
            name: field(row, Some(name)).to_owned(),
            per_user: caps(user_tres, "MaxTRESPU", user_jobs, "MaxJobsPU")?,
            per_account: caps(account_tres, "MaxTRESPA", account_jobs, "MaxJobsPA")?,
            group: caps(grp_tres, "GrpTRES", grp_jobs, "GrpJobs")?,
            flags: flags.map(str::to_owned).collect(),
            unheld: unheld(&table, row, &QOS_UNHELD),
        });
    }
    Ok(read)
}

/// The TRES names by id in `text`, the output of `sacctmgr -P show tres` (`Type|Name|ID`,
/// `gres|gpu|1001`): `cpu`, `mem`, `gres/gpu`, … as TRES lists name them.
pub fn read_tres_ids(text: &str) -> Result<Vec<(u64, String)>, ReadError> {
    let table = Table::of(text);
    let (kind, name, id) = (
        table.needed(&["Type"])?,
        table.column(&["Name"]),
        table.needed(&["ID"])?,
    );
    let mut read = Vec::with_capacity(table.rows.len());
    for (record, _, row) in &table.rows {
        let number = field(row, Some(id));
        let number = number.parse().map_err(|_| {
            ReadError::field_of(
                record,
                "ID",
                Problem::Invalid(format!("{number:?} is not a TRES id")),
            )
        })?;
        let full = match field(row, name) {
            "" => field(row, Some(kind)).to_owned(),
            name => format!("{}/{name}", field(row, Some(kind))),
        };
        read.push((number, full));
    }
    Ok(read)
}

/// The changes of the limits a replay holds in `text`, the output of `sacctmgr -P list
/// transactions withassoc` (`Time|Action|Actor|Where|Info|User|Account|Cluster`), TRES ids
/// named by `tres` ([`read_tres_ids`]); changes of anything else are passed over.
pub fn read_limit_changes(
    text: &str,
    tres: &[(u64, String)],
) -> Result<Vec<LimitChange>, ReadError> {
    let table = Table::of(text);
    let (time, action, info) = (
        table.needed(&["Time"])?,
        table.needed(&["Action"])?,
        table.needed(&["Info"])?,
    );
    let (place, user, account) = (
        table.column(&["Where"]),
        table.column(&["User"]),
        table.column(&["Account"]),
    );
    let mut read = Vec::new();
    for (record, line, row) in &table.rows {
        let of = match field(row, Some(action)) {
            "Modify Associations" => Changed::Assoc {
                account: field(row, account).to_owned(),
                user: Some(field(row, user).to_owned()).filter(|u| !u.is_empty()),
            },
            "Modify QOS" => {
                let named = field(row, place).trim_start_matches("(name='");
                Changed::Qos(named.trim_end_matches("')").to_owned())
            }
            _ => continue,
        };
        let settings = settings(record, field(row, Some(info)), tres)?;
        if settings.is_empty() {
            continue;
        }
        let stamp = field(row, Some(time));
        let at = Time::from_utc(stamp).ok_or_else(|| {
            ReadError::field_of(
                record,
                "Time",
                Problem::Invalid(format!(
                    "{stamp:?} is not a moment such as 2026-11-29T11:21:39"
                )),
            )
        })?;
        read.extend(settings.into_iter().map(|setting| LimitChange {
            line: *line,
            at,
            of: of.clone(),
            setting,
        }));
    }
    Ok(read)
}

/// The settings of limits a replay holds in a transaction's `Info` (`max_jobs=3`, `grp_tres
/// = if (id_assoc=8, '1=24', grp_tres)`, `max_jobs_per_user=NULL`), others passed over.
fn settings(record: &str, info: &str, tres: &[(u64, String)]) -> Result<Vec<Setting>, ReadError> {
    let mut settings = Vec::new();
    for item in split_top(info) {
        let Some((key, value)) = item.split_once('=') else {
            continue;
        };
        let value = value.trim();
        // `if (id=2, '1=16', max_tres_pu)`: the quoted middle is the new value.
        let quoted = value.split('\'').nth(1).filter(|_| value.starts_with("if"));
        let jobs = || match value {
            "NULL" | "-1" => Ok(None),
            value => count(record, "Info", value.trim_matches('\'')),
        };
        let caps = || by_id(record, quoted.unwrap_or(value.trim_matches('\'')), tres);
        settings.push(match key.trim() {
            "grp_tres" => Setting::GroupTres(caps()?),
            "grp_jobs" => Setting::GroupJobs(jobs()?),
            "max_jobs" => Setting::MaxJobs(jobs()?),
            "max_tres_pu" => Setting::UserTres(caps()?),
            "max_jobs_per_user" | "max_jobs_pu" => Setting::UserJobs(jobs()?),
            "max_tres_pa" => Setting::AccountTres(caps()?),
            "max_jobs_pa" | "max_jobs_per_account" => Setting::AccountJobs(jobs()?),
            _ => continue,
        });
    }
    Ok(settings)
}

/// The items of a transaction's `Info`, split at the commas outside parentheses.
fn split_top(info: &str) -> Vec<&str> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in info.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth <= 0 => {
                items.push(&info[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&info[start..]);
    items
}

/// A TRES list by id (`1=24,1001=2`; empty: none) as caps, each id named by `tres`; memory is
/// in MB there, as everywhere Slurm stores it.
fn by_id(record: &str, text: &str, ids: &[(u64, String)]) -> Result<TresCaps, ReadError> {
    let named: Result<Vec<String>, ReadError> = (text.split(',').filter(|i| !i.trim().is_empty()))
        .map(|item| {
            let (id, amount) = item.split_once('=').unwrap_or((item, ""));
            let name = id
                .trim()
                .parse::<u64>()
                .ok()
                .and_then(|id| ids.iter().find(|(i, _)| *i == id));
            let name = name.ok_or_else(|| {
                ReadError::field_of(
                    record,
                    "Info",
                    Problem::Invalid(format!("TRES id {id:?} is none of tres.txt's")),
                )
            })?;
            Ok(format!("{}={}", name.1, amount.trim()))
        })
        .collect();
    tres(record, "Info", &named?.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sacctmgr -P show assoc` of Slurm 22.05, as it prints the header's short names.
    const ASSOC: &str = "Cluster|Account|User|Partition|Par Name|GrpTRES|GrpJobs|GrpSubmit|GrpTRESMins|GrpTRESRunMins|GrpWall|MaxJobs|MaxSubmit|MaxTRES|MaxTRESPerNode|MaxTRESMins|MaxWall|QOS
fairshare|root||||||||||||||||normal
fairshare|mech|||root|cpu=24,gres/gpu=2|10|||||||||||normal
fairshare|mech|ivan|||||||||3|50||||1-00:00:00|normal,scavenger
";

    #[test]
    fn association_limits_are_read_by_column_name() {
        let read = read_assoc_limits(ASSOC).unwrap();
        assert_eq!(read.len(), 3);
        let mech = &read[1];
        assert_eq!(
            (
                mech.account.as_str(),
                mech.user.as_deref(),
                mech.parent.as_deref()
            ),
            ("mech", None, Some("root"))
        );
        assert_eq!(mech.group.tres, [(Tres::Cpu, 24.0), (Tres::Gpu, 2.0)]);
        assert_eq!(mech.group.jobs, Some(10));
        let ivan = &read[2];
        assert_eq!(
            (ivan.user.as_deref(), ivan.max_jobs, ivan.line),
            (Some("ivan"), Some(3), 4)
        );
        assert_eq!(
            ivan.unheld,
            ["MaxSubmit=50", "MaxWall=1-00:00:00"].map(String::from)
        );
        let bad = ASSOC.replace("|3|50|", "|three|50|");
        let e = read_assoc_limits(&bad).unwrap_err().to_string();
        assert_eq!(
            e,
            "line 4: field `MaxJobs` is invalid: \"three\" is not a whole number of jobs"
        );
        let e = read_assoc_limits("Cluster|User\nx|y\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`Account` is missing"), "{e}");
    }

    #[test]
    fn qos_limits_are_read_by_column_name() {
        let text = "Name|MaxTRESPU|MaxJobsPU|MaxSubmitPU|MaxTRESPA|MaxJobsPA|GrpTRES|GrpJobs|MaxTRES|MaxWall|Flags\nnormal||||||||||\nscavenger|cpu=16|2|||4|cpu=64||||DenyOnLimit,OverPartQOS\n";
        let read = read_qos_limits(text).unwrap();
        let q = &read[1];
        assert_eq!(
            q.per_user,
            Caps {
                tres: vec![(Tres::Cpu, 16.0)],
                jobs: Some(2)
            }
        );
        assert_eq!(q.per_account.jobs, Some(4));
        assert_eq!(q.group.tres, [(Tres::Cpu, 64.0)]);
        assert_eq!(q.flags, ["DenyOnLimit", "OverPartQOS"]);
        assert_eq!(read[0].per_user, Caps::default());
    }

    /// The transactions of Slurm 22.05 `withassoc`, as they were recorded on the test cluster.
    #[test]
    fn limit_changes_are_read_from_the_transactions() {
        let text = "Time|Action|Actor|Where|Info|User|Account|Cluster
2026-11-29T11:21:38|Add Users|root|ivan|admin_level=1|||
2026-11-29T11:21:39|Modify Associations|root|(id_assoc=17)|max_jobs=3|ivan|mech|fairshare
2026-11-29T11:21:40|Modify QOS|root|(name='scavenger')|max_jobs_per_user=2, max_tres_pu = if (id=2, '1=16', max_tres_pu)|||
2026-11-29T11:21:40|Modify Associations|root|(id_assoc=8)|grp_tres = if (id_assoc=8, '1=24,2=1000', grp_tres)||mech|fairshare
2026-11-29T11:21:44|Modify Associations|root|(id_assoc=17)|max_jobs=NULL|ivan|mech|fairshare
";
        let tres = read_tres_ids("Type|Name|ID\ncpu||1\nmem||2\ngres|gpu|1001\n").unwrap();
        assert_eq!(tres[2], (1001, "gres/gpu".to_owned()));
        let read = read_limit_changes(text, &tres).unwrap();
        let settings: Vec<&Setting> = read.iter().map(|c| &c.setting).collect();
        assert_eq!(
            settings,
            [
                &Setting::MaxJobs(Some(3)),
                &Setting::UserJobs(Some(2)),
                &Setting::UserTres(vec![(Tres::Cpu, 16.0)]),
                &Setting::GroupTres(vec![(Tres::Cpu, 24.0), (Tres::Mem, 1000.0 * 1024.0)]),
                &Setting::MaxJobs(None),
            ]
        );
        assert_eq!(
            read[0].of,
            Changed::Assoc {
                account: "mech".into(),
                user: Some("ivan".into())
            }
        );
        assert_eq!(read[1].of, Changed::Qos("scavenger".into()));
        assert_eq!(
            read[3].of,
            Changed::Assoc {
                account: "mech".into(),
                user: None
            }
        );
        assert_eq!(read[0].at, Time::from_utc("2026-11-29T11:21:39").unwrap());
        let unknown = text.replace("'1=24,2=1000'", "'9=1'");
        let e = read_limit_changes(&unknown, &tres).unwrap_err().to_string();
        assert!(
            e.starts_with("line 5: field `Info`") && e.contains("TRES id \"9\""),
            "{e}"
        );
    }
}
