//! Runs the real `fairshare serve` on a free loopback port, on a fresh SQLite file or a fresh
//! PostgreSQL database, and talks HTTP to it.

#![allow(dead_code)] // each test module uses its own part of the helpers

use fairshare_service::TokenDigest;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The test tokens, one per role.
pub const ADMIN: &str = "fs_test_admin_0123456789abcdef0123456789abcdef";
/// See [`ADMIN`].
pub const AGENT: &str = "fs_test_agent_0123456789abcdef0123456789abcdef";
/// See [`ADMIN`].
pub const READER: &str = "fs_test_reader_0123456789abcdef0123456789abcde";

/// Where the daemon keeps its state for one test.
pub struct Database {
    /// The `--database` URL.
    pub url: String,
    /// The folder of the config file (and of the SQLite file).
    pub dir: tempfile::TempDir,
    drop_pg: Option<(String, String)>,
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Some((admin_url, name)) = &self.drop_pg {
            let _ = sql(
                admin_url,
                &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            );
        }
    }
}

/// The backends to run against: SQLite always, PostgreSQL when FAIRSHARE_TEST_POSTGRES names
/// a server (`.ci/run` starts one).
pub fn backends() -> Vec<&'static str> {
    if std::env::var("FAIRSHARE_TEST_POSTGRES").is_ok() {
        vec!["sqlite", "postgres"]
    } else {
        eprintln!(
            "skipping the PostgreSQL runs: set FAIRSHARE_TEST_POSTGRES=postgres://USER:PASSWORD@HOST/DB \
             (a role that may create databases) to run them"
        );
        vec!["sqlite"]
    }
}

/// Every daemon test runs on SQLite, and on PostgreSQL only where `FAIRSHARE_TEST_POSTGRES`
/// names a server: this test is ignored elsewhere, so that the summary says what was not run.
#[test]
#[cfg_attr(
    not(live_postgres),
    ignore = "needs PostgreSQL: FAIRSHARE_TEST_POSTGRES=postgres://USER:PASSWORD@HOST/DB (a role that may create databases); without it the daemon tests ran on SQLite only"
)]
fn the_daemon_tests_reach_postgresql() {
    assert_eq!(backends(), ["sqlite", "postgres"]);
    let _database = database("postgres", "");
}

/// A fresh database of this backend, and a config file with the three test tokens.
pub fn database(backend: &str, extra_config: &str) -> Database {
    let dir = tempfile::tempdir().unwrap();
    let (url, drop_pg) = if backend == "postgres" {
        let admin = std::env::var("FAIRSHARE_TEST_POSTGRES").expect("checked by backends()");
        let name = format!(
            "fairshare_t{}_{}",
            std::process::id(),
            dir.path()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_lowercase()
                .replace(['.', '-'], "")
        );
        sql(&admin, &format!("CREATE DATABASE {name}")).expect("creating a test database");
        let base = &admin[..admin.rfind('/').expect("a URL with a database")];
        (format!("{base}/{name}"), Some((admin, name)))
    } else {
        (
            format!("sqlite:{}", dir.path().join("fs.db").display()),
            None,
        )
    };
    let tokens: String = [("admin", ADMIN), ("agent", AGENT), ("reader", READER)]
        .iter()
        .map(|(role, t)| {
            format!(
                "[[tokens]]\nrole = \"{role}\"\nsha256 = \"{}\"\n",
                TokenDigest::of(t).to_hex()
            )
        })
        .collect();
    std::fs::write(
        dir.path().join("fairshare.toml"),
        format!("{extra_config}\n{tokens}"),
    )
    .unwrap();
    Database { url, dir, drop_pg }
}

/// Runs `work` on a fresh connection to the database at `url` (SQLite or PostgreSQL, through
/// sqlx: no client program needed), on a runtime of its own.
pub fn on_database<T>(
    url: &str,
    work: impl AsyncFnOnce(&mut sqlx::AnyConnection) -> T,
) -> Result<T, String> {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut conn = sqlx::AnyConnection::connect(url)
            .await
            .map_err(|e| e.to_string())?;
        Ok(work(&mut conn).await)
    })
}

/// Runs SQL statements on the database at `url`.
pub fn sql(url: &str, statements: &str) -> Result<(), String> {
    on_database(url, async |conn| {
        sqlx::raw_sql(statements).execute(conn).await.map(|_| ())
    })?
    .map_err(|e| e.to_string())
}

/// `fairshare serve` on `db` with its configuration file and `flags` (on a free loopback port
/// unless they give `--listen`), its log on standard error.
fn serve(db: &Database, flags: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fairshare"));
    command.arg("serve");
    if !flags.contains(&"--listen") {
        command.args(["--listen", "127.0.0.1:0"]);
    }
    command
        .args(["--database", &db.url])
        .arg("--config")
        .arg(db.dir.path().join("fairshare.toml"))
        .args(flags)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// A running `fairshare serve`.
pub struct Daemon {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    log: Arc<Mutex<String>>,
}

impl Daemon {
    /// Starts the daemon on `db` with a priority cycle every `interval` seconds.
    pub fn start(db: &Database, interval: f64) -> Daemon {
        Daemon::start_with(db, &["--interval", &interval.to_string()])
    }

    /// Starts the daemon on `db` with these extra flags (a free loopback port unless they
    /// give `--listen`).
    pub fn start_with(db: &Database, flags: &[&str]) -> Daemon {
        let mut child = serve(db, flags)
            .spawn()
            .expect("the fairshare binary starts");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if let Some(addr) = line.split("listening addr=").nth(1) {
                    let _ = tx.send(
                        addr.split_whitespace()
                            .next()
                            .unwrap_or_default()
                            .to_string(),
                    );
                }
                sink.lock().unwrap().push_str(&line);
                sink.lock().unwrap().push('\n');
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                panic!("the daemon did not start:\n{}", log.lock().unwrap());
            }
        };
        Daemon {
            child,
            url: format!("http://{addr}"),
            log,
        }
    }

    /// Runs `fairshare serve` on `db` expecting it to refuse to start: its exit status and what
    /// it printed (it must exit within 30 s).
    pub fn refused(db: &Database, flags: &[&str]) -> (ExitStatus, String) {
        let mut child = serve(db, flags)
            .spawn()
            .expect("the fairshare binary starts");
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                panic!(
                    "still running after 30 s:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        (
            out.status,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `host:port` of the daemon.
    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// What the daemon logged so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// SIGKILL: no chance to clean up.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, and the exit status (waits at most 30 s).
    pub fn terminate(mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "no exit 30 s after SIGTERM:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Calls the API: the status and the JSON answer (`null` for none).
    pub fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request =
            ureq::request(method, &format!("{}{path}", self.url)).timeout(Duration::from_secs(30));
        if let Some(t) = token {
            request = request.set("Authorization", &format!("Bearer {t}"));
        }
        let result = match body {
            Some(b) => request.send_json(b),
            None => request.call(),
        };
        let response = match result {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{method} {path}: {e}\n{}", self.log()),
        };
        let status = response.status();
        let text = response.into_string().unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Like [`Daemon::call`], expecting `want`.
    pub fn expect(
        &self,
        want: u16,
        method: &str,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> Value {
        let (status, answer) = self.call(method, path, Some(token), body);
        assert_eq!(status, want, "{method} {path}: {answer}\n{}", self.log());
        answer
    }

    /// Waits until a cycle after `after` has been computed and served; its priorities.
    pub fn cycle_after(&self, after: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let p = self.expect(200, "GET", "/v1/priorities", READER, None);
            if p["cycle"].as_u64().unwrap() > after {
                return p;
            }
            assert!(Instant::now() < deadline, "no cycle after {after} in 30 s");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A node of 8 CPUs, 32 GiB, 200 MB/s of disk and 125 MB/s of network.
pub fn node() -> Value {
    json!({"supply": {"cpu": 8, "mem": 34359738368u64, "disk": 2e8, "net": 1.25e8}, "speed": 1.0})
}

/// A workload of 2 VCPUs and 4 GiB.
pub fn workload(owner: &str, node: &str) -> Value {
    json!({"owner": owner, "node": node, "virtual": {"cpu": 2, "mem": 4294967296u64}})
}

/// A usage report: `cpu_s` CPU-seconds per workload over 10 s, 1 GiB of memory, no I/O.
pub fn report(node: &str, seq: u64, samples: &[(&str, f64)]) -> Value {
    let samples: Vec<Value> = samples
        .iter()
        .map(|(w, cpu)| json!({"workload": w, "usage": {"cpu": cpu, "mem": 1073741824u64, "disk": 0, "net": 0}}))
        .collect();
    json!({"node": node, "seq": seq, "interval_s": 10.0, "samples": samples})
}

/// Registers node `n1`, users d and e, and workloads d1, d2 (of d) and e1 (of e) on it.
pub fn register_e1(daemon: &Daemon) {
    daemon.expect(204, "PUT", "/v1/nodes/n1", ADMIN, Some(&node()));
    for user in ["d", "e"] {
        daemon.expect(
            204,
            "PUT",
            &format!("/v1/users/{user}"),
            ADMIN,
            Some(&json!({})),
        );
    }
    for (w, owner) in [("d1", "d"), ("d2", "d"), ("e1", "e")] {
        daemon.expect(
            204,
            "PUT",
            &format!("/v1/workloads/{w}"),
            ADMIN,
            Some(&workload(owner, "n1")),
        );
    }
}

/// The reports table: every (node, seq) stored, and the cycle that counted it.
pub fn stored_reports(url: &str) -> Vec<(String, i64, Option<i64>)> {
    use sqlx::Row;
    on_database(url, async |conn| {
        sqlx::query(
            "SELECT r.node, r.seq, c.cycle FROM reports r
             JOIN report_cycles c ON c.node = r.node AND c.seq = r.seq ORDER BY r.node, r.seq",
        )
        .fetch_all(conn)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
    })
    .unwrap()
}
