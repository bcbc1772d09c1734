//! The fairness service's wire model and its priority cycle, in a crate of their own: the node
//! agent and the report speak the daemon's language and run its pure cycle without linking its
//! HTTP server, SQL store or TLS. The daemon itself is `fairshare-service`.

pub mod cycle;
pub mod model;
