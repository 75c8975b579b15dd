//! One throwaway PostgreSQL cluster for the whole test binary: initialised in a temporary
//! directory, listening on a Unix socket in it only, started on first use, and stopped and
//! removed when the binary exits (an `atexit` hook; a watchdog process does it too should the
//! binary be killed). Each test gets a database of its own, so tests run in parallel.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The port in the socket's name (`.s.PGSQL.5432`): no TCP listener, so it cannot collide.
const PORT: u16 = 5432;
/// The cluster's superuser, as the URLs name it.
const USER: &str = "benchlab";

struct Cluster {
    /// The temporary directory: `data/`, `sock/`, `log`.
    root: PathBuf,
    /// The PostgreSQL binaries.
    bin: PathBuf,
    /// The process that cleans up should this binary die without running its exit hooks.
    watchdog: Mutex<Option<Child>>,
}

static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
/// CREATE DATABASE copies template1: one at a time.
static CREATE: Mutex<()> = Mutex::new(());

/// A new, empty database of the cluster (started on first use), as a `postgres://` URL.
pub fn database(name: &str) -> String {
    let cluster = match CLUSTER.get_or_init(start) {
        Ok(cluster) => cluster,
        Err(why) => panic!("{why}"),
    };
    let unique = format!("{name}_{}", std::process::id());
    let _one = CREATE.lock().unwrap_or_else(|e| e.into_inner());
    let mut admin = postgres::Client::connect(&cluster.url("postgres"), postgres::NoTls)
        .expect("the test cluster answers");
    admin
        .batch_execute(&format!("CREATE DATABASE \"{unique}\""))
        .expect("CREATE DATABASE");
    cluster.url(&unique)
}

/// A client on the database `url`, for what the CLI does not show (tables, schema rows).
pub fn client(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).expect("the test cluster answers")
}

impl Cluster {
    fn url(&self, db: &str) -> String {
        let sock = self
            .root
            .join("sock")
            .display()
            .to_string()
            .replace('/', "%2F");
        format!("postgres://{USER}@{sock}:{PORT}/{db}")
    }

    /// `pg_ctl stop`, the directory removed, the watchdog ended.
    fn stop(&self) {
        let data = self.root.join("data");
        let data = data.to_str().unwrap();
        let _ = as_postgres(
            &self.bin.join("pg_ctl"),
            &["-D", data, "-m", "immediate", "-w", "stop"],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
        let _ = std::fs::remove_dir_all(&self.root);
        if let Some(mut child) = self
            .watchdog
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding initdb.
fn binaries() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// Whether this process runs as root (postgres refuses to: its commands go through runuser).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `program args…`, as the postgres user when this process is root.
fn as_postgres(program: &Path, args: &[&str]) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command
            .args(["-u", "postgres", "--"])
            .arg(program)
            .args(args);
        command
    } else {
        let mut command = Command::new(program);
        command.args(args);
        command
    }
}

/// Runs `command` to the end; its output in the error when it fails.
fn run(what: &str, command: &mut Command) -> Result<(), String> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

fn start() -> Result<Cluster, String> {
    let Some(bin) = binaries() else {
        return Err("the PostgreSQL tests need PostgreSQL's server binaries \
                    (/usr/lib/postgresql/*/bin/initdb, Debian's `postgresql` package), and \
                    there are none: run scripts/setup"
            .to_string());
    };
    let root = tempfile::Builder::new()
        .prefix("benchlab-history-pg.")
        .tempdir()
        .map_err(|e| e.to_string())?
        .keep();
    let cluster = Cluster {
        root,
        bin,
        watchdog: Mutex::new(None),
    };
    match init_and_start(&cluster) {
        Ok(()) => {
            stop_at_exit();
            Ok(cluster)
        }
        Err(why) => {
            cluster.stop();
            Err(format!("starting the PostgreSQL test cluster: {why}"))
        }
    }
}

/// Stops the cluster and removes its directory when the test binary exits: statics are never
/// dropped, and libtest's `main` returns (or calls `exit`) once every test is done, which runs
/// the C library's exit hooks.
#[allow(unsafe_code)]
fn stop_at_exit() {
    extern "C" fn at_exit() {
        if let Some(Ok(cluster)) = CLUSTER.get() {
            cluster.stop();
        }
    }
    // SAFETY: registers a plain `extern "C"` function without arguments, as atexit(3) wants;
    // it only reads a static initialised before it is registered.
    let _ = unsafe { libc::atexit(at_exit) };
}

fn init_and_start(cluster: &Cluster) -> Result<(), String> {
    let root = cluster.root.to_str().unwrap();
    let (data, sock, log) = (
        format!("{root}/data"),
        format!("{root}/sock"),
        format!("{root}/log"),
    );
    std::fs::create_dir(&sock).map_err(|e| e.to_string())?;
    if is_root() {
        run(
            "chown",
            Command::new("chown").args(["-R", "postgres:postgres", root]),
        )?;
    }
    let initdb = cluster.bin.join("initdb");
    let args = [
        "-D",
        &data,
        "-A",
        "trust",
        "-U",
        USER,
        "--no-sync",
        "--no-locale",
        "-E",
        "UTF8",
    ];
    run("initdb", &mut as_postgres(&initdb, &args))?;
    *cluster.watchdog.lock().unwrap() = Some(watchdog(cluster)?);
    let options = format!(
        "-k {sock} -p {PORT} -c listen_addresses='' -c fsync=off -c synchronous_commit=off \
         -c full_page_writes=off -c max_connections=200"
    );
    let pg_ctl = cluster.bin.join("pg_ctl");
    let args = [
        "-D", &data, "-o", &options, "-l", &log, "-w", "-t", "60", "start",
    ];
    run("pg_ctl start", &mut as_postgres(&pg_ctl, &args)).map_err(|e| {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        format!("{e}\nserver log:\n{log}")
    })
}

/// A shell that waits for this process to end, then stops the server and removes the
/// directory: the cleanup when this binary is killed before its exit hooks run.
fn watchdog(cluster: &Cluster) -> Result<Child, String> {
    let root = cluster.root.display().to_string();
    let stop = as_postgres(
        &cluster.bin.join("pg_ctl"),
        &[
            "-D",
            &format!("{root}/data"),
            "-m",
            "immediate",
            "-w",
            "stop",
        ],
    );
    let stop: Vec<String> = std::iter::once(stop.get_program())
        .chain(stop.get_args())
        .map(|a| format!("'{}'", a.to_str().unwrap()))
        .collect();
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf '{root}'",
        pid = std::process::id(),
        stop = stop.join(" "),
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("watchdog: {e}"))
}
