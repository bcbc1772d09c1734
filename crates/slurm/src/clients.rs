//! Slurm's associations (`sacctmgr show assoc`) as the reconcile's clients: the tree of the
//! cluster the adapter serves, walked from its `root` account.

use fairshare_reconcile::clients::{Clients, ClientsError, Tree};
use fairshare_trace::assoc::{Associations, ClusterTree};

/// Why `sacctmgr`'s associations give no clients to rank.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AssocError {
    /// The cluster has no `root` account (or is not in the tree at all).
    #[error("cluster `{0}` has no root account in sacctmgr's associations")]
    NoRoot(String),
    /// Several clusters are listed and none was chosen.
    #[error("sacctmgr lists several clusters ({0}) and `scontrol show config` names none of them (ClusterName); name one in the configuration (`cluster`)")]
    WhichCluster(String),
    /// The cluster's tree has no client to rank.
    #[error(transparent)]
    Clients(#[from] ClientsError),
}

/// The clients of `cluster` (`None`: the only cluster listed) in `tree`.
pub fn clients(tree: &Associations, cluster: Option<&str>) -> Result<Clients, AssocError> {
    let cluster = match cluster {
        Some(c) => c.to_string(),
        None => match tree.only_cluster() {
            Ok(Some(one)) => one,
            Ok(None) => return Err(AssocError::NoRoot("(none listed)".into())),
            Err(many) => return Err(AssocError::WhichCluster(many.join(", "))),
        },
    };
    let Some(walked) = tree.tree_of(&cluster) else {
        return Err(AssocError::NoRoot(cluster));
    };
    let ClusterTree {
        tree,
        users,
        left_out,
    } = walked;
    let tree = Tree {
        cluster,
        accounts: tree,
        users,
        left_out,
    };
    Ok(Clients::new(tree)?)
}
