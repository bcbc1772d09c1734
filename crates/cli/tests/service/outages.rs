//! Database outages, through a relay that can be cut or stalled: `/readyz` and writes answer
//! 503 within their bounds instead of hanging.

use super::*;

/// A TCP relay from a loopback port to `target` that can be cut: every connection through it
/// closed and new ones refused, as when the database's host goes away.
struct Relay {
    port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    stalled: std::sync::Arc<std::sync::atomic::AtomicU8>,
}

impl Relay {
    fn to(target: &str) -> Relay {
        use std::net::{Shutdown, TcpListener, TcpStream};
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stalled = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(FLOWING));
        let target = target.to_string();
        let flag = cut.clone();
        let stall = stalled.clone();
        std::thread::spawn(move || {
            let mut open: Vec<TcpStream> = Vec::new();
            listener.set_nonblocking(true).unwrap();
            loop {
                if flag.load(Ordering::Relaxed) {
                    for s in &open {
                        let _ = s.shutdown(Shutdown::Both);
                    }
                    return; // the listener goes too: connections are refused
                }
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let server = TcpStream::connect(&target).unwrap();
                        for (mut from, mut to) in [
                            (client.try_clone().unwrap(), server.try_clone().unwrap()),
                            (server.try_clone().unwrap(), client.try_clone().unwrap()),
                        ] {
                            let stall = stall.clone();
                            std::thread::spawn(move || {
                                forward(&mut from, &mut to, &stall, STALL_AT);
                                let _ = to.shutdown(Shutdown::Both);
                            });
                        }
                        open.extend([client, server]);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Relay { port, cut, stalled }
    }

    /// Closes every connection and refuses new ones: an outage that fails fast.
    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(100));
    }

    /// From the next report's insert on, stops forwarding while keeping every connection
    /// open: a database host that starts dropping packets in the middle of a commit.
    fn stall(&self) {
        self.stalled
            .store(ARMED, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The relay's stall states: forwarding, waiting for [`STALL_AT`], holding everything back.
const FLOWING: u8 = 0;

const ARMED: u8 = 1;

const STALLED: u8 = 2;

/// What, sent to the database once the relay is told to stall, stalls it: a report's insert,
/// so that the database stops answering in the middle of a group commit.
const STALL_AT: &[u8] = b"INSERT INTO reports";

/// Copies `from` to `to` until either ends. Once `stall` is armed, the first chunk holding
/// `at` and everything after it are held back, the connections left open.
fn forward(
    from: &mut std::net::TcpStream,
    to: &mut std::net::TcpStream,
    stall: &std::sync::atomic::AtomicU8,
    at: &[u8],
) {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering;
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if stall.load(Ordering::Relaxed) == ARMED && buf[..n].windows(at.len()).any(|w| w == at) {
            stall.store(STALLED, Ordering::Relaxed);
        }
        while stall.load(Ordering::Relaxed) == STALLED {
            std::thread::sleep(Duration::from_millis(20));
        }
        if to.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

/// A daemon on PostgreSQL reached through a [`Relay`], ready, with user e and workload d1 on
/// node n1; `None` (the test skips) without a PostgreSQL server.
fn behind_a_relay() -> Option<(Relay, Database, Daemon)> {
    if !backends().contains(&"postgres") {
        return None;
    }
    let mut db = database("postgres", "");
    let relay = Relay::to("127.0.0.1:5432");
    db.url = db
        .url
        .replacen("127.0.0.1/", &format!("127.0.0.1:{}/", relay.port), 1);
    let daemon = Daemon::start(&db, 10.0);
    register_e1(&daemon);
    daemon.expect(200, "GET", "/readyz", READER, None);
    Some((relay, db, daemon))
}

#[test]
fn in_a_database_outage_readyz_and_writes_answer_503_within_a_second() {
    let Some((relay, _db, daemon)) = behind_a_relay() else {
        return;
    };
    relay.cut();
    for (method, path, body) in [
        ("GET", "/readyz", None),
        ("POST", "/v1/usage", Some(report("n1", 1, &[("d1", 1.0)]))),
        ("PUT", "/v1/nodes/n1", Some(node())),
        ("GET", "/readyz", None),
    ] {
        let started = Instant::now();
        let (status, answer) = daemon.call(method, path, Some(ADMIN), body.as_ref());
        let took = started.elapsed();
        assert_eq!(status, 503, "{method} {path}: {answer}");
        assert!(
            took < Duration::from_millis(1500),
            "{method} {path} took {took:?}"
        );
    }
}

/// A database host that stops answering in the middle of a commit without closing its
/// connections (dropped packets): the report being stored and the next are answered 503
/// within the write deadline (2 s), `/readyz` within the acquire bound (1 s), instead of
/// waiting until TCP gives up.
#[test]
fn a_database_that_stops_answering_gets_503_not_a_hang() {
    let Some((relay, _db, daemon)) = behind_a_relay() else {
        return;
    };
    relay.stall();
    for (method, path, body, within) in [
        (
            "POST",
            "/v1/usage",
            Some(report("n1", 1, &[("d1", 1.0)])),
            2500,
        ),
        (
            "POST",
            "/v1/usage",
            Some(report("n1", 2, &[("d1", 1.0)])),
            2500,
        ),
        ("GET", "/readyz", None, 1500),
    ] {
        let started = Instant::now();
        let (status, answer) = daemon.call(method, path, Some(ADMIN), body.as_ref());
        let took = started.elapsed();
        assert_eq!(status, 503, "{method} {path}: {answer}");
        assert!(
            took < Duration::from_millis(within),
            "{method} {path} took {took:?}"
        );
    }
}
