//! Which connections the daemon keeps, so that nothing a client without a token does keeps an
//! agent from reporting. Four rules, all applied where a connection is accepted or read:
//!
//! - **A cap on all.** At most `limits.max_connections` are open (file descriptors, tasks).
//! - **A cap per peer.** One peer (an IPv4 address, or an IPv6 /64, which one host can fill with
//!   addresses) holds at most `limits.max_connections_per_peer` of them, so no one host takes
//!   every slot.
//! - **A deadline for the first request.** A connection must bring its first request's headers
//!   within `limits.header_timeout_s` of being accepted; one that sends nothing (or too little to
//!   make a request) is closed then, not at the idle timeout.
//! - **Strangers make room.** At the cap, a new connection takes the slot of the oldest one that
//!   has not presented a valid token (first those that have not finished a request at all), which
//!   is closed; connections that have shown a token are never closed to make room.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use atomic_waker::AtomicWaker;
use tokio::time::{Instant, Sleep};

/// Where connections come from, as far as the per-peer cap is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Peer {
    /// An IPv4 address (also when it arrives mapped into IPv6).
    V4(u32),
    /// The first 64 bits of an IPv6 address: one host may have a whole /64.
    V6(u64),
}

impl Peer {
    fn of(addr: SocketAddr) -> Peer {
        match addr.ip().to_canonical() {
            IpAddr::V4(v4) => Peer::V4(u32::from(v4)),
            IpAddr::V6(v6) => Peer::V6((u128::from(v6) >> 64) as u64),
        }
    }
}

/// What the daemon learns of one connection while it is open, shared by its stream, its
/// requests and the admission table.
#[derive(Debug, Default)]
pub(crate) struct Mark {
    /// A request of this connection reached the service (its headers were complete).
    requested: AtomicBool,
    /// A request of this connection presented a valid token.
    proven: AtomicBool,
    /// The connection was chosen to make room and must close.
    evicted: AtomicBool,
    /// Wakes the connection's reader when it is evicted.
    waker: AtomicWaker,
}

impl Mark {
    /// Records that a request arrived on this connection.
    pub(crate) fn requested(&self) {
        self.requested.store(true, Ordering::Relaxed);
    }

    /// Records that a request on this connection presented a valid token.
    pub(crate) fn prove(&self) {
        self.proven.store(true, Ordering::Relaxed);
    }

    fn evict(&self) {
        self.evicted.store(true, Ordering::Relaxed);
        self.waker.wake();
    }
}

/// How a connection was let in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admitted {
    /// A slot was free.
    Free,
    /// The cap was reached: a connection without a token was closed to make room.
    Evicting,
}

/// Why a connection was closed as soon as it was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Its peer already holds `max_connections_per_peer`.
    PeerFull,
    /// Every slot is held by a connection that has shown a token.
    Full,
}

/// One open connection in the table.
struct Entry {
    peer: Peer,
    mark: Arc<Mark>,
}

/// The most connections closed to make room whose sockets may still be open (an evicted
/// connection closes at its next read or write, within moments): more waiting at the cap are
/// refused, so that open files stay below `max_connections` and the daemon's reserve.
const EVICTING_AT_MOST: usize = 64;

/// The open connections in the order they were accepted, how many each peer holds, and how
/// many evicted ones have not closed yet.
#[derive(Default)]
struct Table {
    next: u64,
    open: BTreeMap<u64, Entry>,
    per_peer: HashMap<Peer, usize>,
    evicting: usize,
}

impl Table {
    fn remove(&mut self, id: u64) -> Option<Entry> {
        let entry = self.open.remove(&id)?;
        if let Some(n) = self.per_peer.get_mut(&entry.peer) {
            *n -= 1;
            if *n == 0 {
                self.per_peer.remove(&entry.peer);
            }
        }
        Some(entry)
    }

    /// The oldest connection that has not finished a request, else the oldest that has shown
    /// no token.
    fn stranger(&self) -> Option<u64> {
        let unproven = |e: &Entry| !e.mark.proven.load(Ordering::Relaxed);
        let silent = |e: &Entry| unproven(e) && !e.mark.requested.load(Ordering::Relaxed);
        let oldest = |wanted: &dyn Fn(&Entry) -> bool| {
            self.open.iter().find(|(_, e)| wanted(e)).map(|(&id, _)| id)
        };
        oldest(&silent).or_else(|| oldest(&unproven))
    }
}

/// The admission table: every open connection, by age and by peer.
pub(crate) struct Admission {
    max: usize,
    per_peer: usize,
    table: Mutex<Table>,
}

impl Admission {
    /// A table for at most `max` connections, `per_peer` of them from one peer.
    pub(crate) fn new(max: usize, per_peer: usize) -> Arc<Admission> {
        Arc::new(Admission {
            max,
            per_peer,
            table: Mutex::default(),
        })
    }

    /// Lets a connection from `peer` in, or says why not.
    pub(crate) fn admit(self: &Arc<Self>, peer: SocketAddr) -> Result<(Ticket, Admitted), Refused> {
        let peer = Peer::of(peer);
        let mut table = self.table.lock().expect("no holder panics");
        if table.per_peer.get(&peer).copied().unwrap_or(0) >= self.per_peer {
            return Err(Refused::PeerFull);
        }
        let admitted = if table.open.len() < self.max {
            Admitted::Free
        } else if table.evicting >= EVICTING_AT_MOST {
            return Err(Refused::Full);
        } else {
            let id = table.stranger().ok_or(Refused::Full)?;
            let evicted = table.remove(id).expect("the stranger is open");
            evicted.mark.evict();
            table.evicting += 1;
            Admitted::Evicting
        };
        let id = table.next;
        table.next += 1;
        let mark = Arc::new(Mark::default());
        table.open.insert(
            id,
            Entry {
                peer,
                mark: mark.clone(),
            },
        );
        *table.per_peer.entry(peer).or_default() += 1;
        let ticket = Ticket {
            admission: self.clone(),
            id,
            mark,
        };
        Ok((ticket, admitted))
    }

    /// How many connections are open.
    pub(crate) fn open(&self) -> usize {
        self.table.lock().expect("no holder panics").open.len()
    }
}

/// A connection's place in the table, given up when the connection closes.
pub(crate) struct Ticket {
    admission: Arc<Admission>,
    id: u64,
    mark: Arc<Mark>,
}

impl Ticket {
    /// What the connection's requests record about it.
    pub(crate) fn mark(&self) -> &Arc<Mark> {
        &self.mark
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut table = self.admission.table.lock().expect("no holder panics");
        // An evicted connection's slot was already handed on; its socket closes now.
        if table.remove(self.id).is_none() {
            table.evicting = table.evicting.saturating_sub(1);
        }
    }
}

/// Decides, on every read of a connection, whether it must close: evicted, or still without a
/// request at its deadline.
pub(crate) struct Watch {
    ticket: Ticket,
    first_request_by: Option<Pin<Box<Sleep>>>,
}

impl Watch {
    /// Watches the connection of `ticket`, which must bring a request by `deadline`.
    pub(crate) fn new(ticket: Ticket, deadline: Instant) -> Watch {
        Watch {
            ticket,
            first_request_by: Some(Box::pin(tokio::time::sleep_until(deadline))),
        }
    }

    /// `Ready(error)` when the connection must close (asked on every read, write and flush);
    /// otherwise arranges to be woken when that changes.
    pub(crate) fn poll_closing(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Error> {
        let mark = &self.ticket.mark;
        mark.waker.register(cx.waker());
        if mark.evicted.load(Ordering::Relaxed) {
            return Poll::Ready(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "closed to make room for a new connection",
            ));
        }
        if mark.requested.load(Ordering::Relaxed) {
            self.first_request_by = None;
        }
        let Some(deadline) = &mut self.first_request_by else {
            return Poll::Pending;
        };
        deadline.as_mut().poll(cx).map(|()| {
            std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no request within limits.header_timeout_s of the connection",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn one_peer_gets_at_most_its_share_and_ipv6_counts_by_slash_64() {
        let a = Admission::new(10, 2);
        let _t: Vec<_> = ["10.0.0.1:1", "10.0.0.1:2"]
            .map(|p| a.admit(addr(p)).unwrap().0)
            .into();
        assert_eq!(a.admit(addr("10.0.0.1:3")).err(), Some(Refused::PeerFull));
        assert_eq!(
            a.admit(addr("[::ffff:10.0.0.1]:4")).err(),
            Some(Refused::PeerFull)
        );
        let _u: Vec<_> = ["[2001:db8::1]:1", "[2001:db8::2]:1"]
            .map(|p| a.admit(addr(p)).unwrap().0)
            .into();
        assert_eq!(
            a.admit(addr("[2001:db8::ffff:3]:1")).err(),
            Some(Refused::PeerFull)
        );
        assert!(a.admit(addr("[2001:db8:0:1::1]:1")).is_ok());
        assert_eq!(a.open(), 4, "the refused and the dropped are not counted");
    }

    #[test]
    fn at_the_cap_the_oldest_stranger_makes_room_and_token_holders_never_do() {
        let a = Admission::new(3, 3);
        let (agent, _) = a.admit(addr("10.0.0.1:1")).unwrap();
        agent.mark().requested();
        agent.mark().prove();
        let (served, _) = a.admit(addr("10.0.0.2:1")).unwrap();
        served.mark().requested();
        let (silent, _) = a.admit(addr("10.0.0.3:1")).unwrap();
        // The silent one goes first, though the served one is older.
        let (next, how) = a.admit(addr("10.0.0.4:1")).unwrap();
        assert_eq!(how, Admitted::Evicting);
        assert!(silent.mark.evicted.load(Ordering::Relaxed));
        assert!(!served.mark.evicted.load(Ordering::Relaxed));
        next.mark().prove();
        // Then the one that made a request without a token.
        let (last, how) = a.admit(addr("10.0.0.5:1")).unwrap();
        assert_eq!(how, Admitted::Evicting);
        assert!(served.mark.evicted.load(Ordering::Relaxed));
        last.mark().prove();
        // Every slot now belongs to a token holder.
        assert_eq!(a.admit(addr("10.0.0.6:1")).err(), Some(Refused::Full));
        assert!(!agent.mark.evicted.load(Ordering::Relaxed));
        assert_eq!(a.open(), 3);
        // An evicted connection closing later frees nothing twice.
        assert_eq!(a.table.lock().unwrap().evicting, 2);
        drop(silent);
        drop(served);
        assert_eq!(a.open(), 3);
        assert_eq!(a.table.lock().unwrap().evicting, 0);
        drop(agent);
        assert_eq!(a.open(), 2);
        assert!(a.admit(addr("10.0.0.6:1")).is_ok());
    }

    /// Evicted connections whose sockets have not closed yet are bounded: past that, a new
    /// connection at the cap waits its turn (refused) rather than open one more file.
    #[test]
    fn evictions_waiting_to_close_are_bounded() {
        let a = Admission::new(1, 1);
        let mut evicted = Vec::new();
        let (mut last, _) = a.admit(addr("10.0.0.1:1")).unwrap();
        for i in 0..EVICTING_AT_MOST {
            let (next, how) = a
                .admit(addr(&format!("10.1.{}.{}:1", i / 200, i % 200)))
                .unwrap();
            assert_eq!(how, Admitted::Evicting);
            evicted.push(std::mem::replace(&mut last, next));
        }
        assert_eq!(a.admit(addr("10.2.0.1:1")).err(), Some(Refused::Full));
        drop(evicted.pop());
        assert!(
            a.admit(addr("10.2.0.1:1")).is_ok(),
            "one closed, one may come"
        );
    }
}
