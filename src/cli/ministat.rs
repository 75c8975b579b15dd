//! `benchlab ministat`: FreeBSD's ministat(1), flag for flag.
//!
//! Arguments are parsed here, not by clap, because ministat's interface is the contract:
//! glibc `getopt` semantics (clusters `-Ans`, attached values `-c95`, options after file names
//! unless `POSIXLY_CORRECT` is set, `--` ending options), the same usage text and messages, exit
//! status 2 on bad usage or data. Additions: `--legacy` (Debian's ministat 20150715 instead of
//! current FreeBSD), `--accurate` (the exactly rounded standard deviation), `--json` (the
//! numbers, machine-readable) and `--help`.
//!
//! Two deliberate differences from Debian's binary: a file that cannot be opened exits with
//! status 2 (bad input, like every other data error), where Debian's exits with 1; and a line
//! over 1 MiB (`stats::ministat::MAX_LINE_BYTES`: a stream without newlines, such as
//! `/dev/zero`) is refused naming its file and line, where Debian's reads on forever. Input is
//! read as a stream, only the values kept (8 bytes each). Where Debian's binary has undefined
//! behaviour (plot width 0 or 1, infinite or NaN values in a plot:
//! it writes outside its buffers or crashes), benchlab still prints a plot, or
//! "[no plot, span is infinite]".

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::Context;

use crate::error::InputError;
use crate::stats::ministat::read_datasets;
use crate::stats::strtod::strtol;
use crate::stats::{
    fmt_g, Analysis, Confidence, ConfidenceError, Flavor, MinistatOptions, ReadOptions,
};

/// The widest plot drawn: ministat's plot is columns × stacked points, so an absurd width
/// (2147483647) would allocate gigabytes. A constant in the message below.
const MAX_WIDTH: usize = 10_000;

/// Program name in messages.
const PROGRAM: &str = "benchlab ministat";

/// Arguments of `benchlab ministat`, kept raw: ministat's own parser reads them.
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true, after_help = format!("Flags:\n{}", flag_lines(true)))]
pub(crate) struct MinistatArgs {
    /// [-Ans] [-C column] [-c confidence] [-d delimiters] [-w width] [--legacy|--accurate]
    /// [--json] [file ...]
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_parser = clap::value_parser!(OsString)
    )]
    pub(crate) args: Vec<OsString>,
}

/// A parsed command line.
#[derive(Debug)]
struct Invocation {
    options: MinistatOptions,
    read: ReadOptions,
    files: Vec<OsString>,
    json: bool,
}

/// What the command line asks for.
#[derive(Debug)]
enum Parsed {
    Run(Invocation),
    Help,
    /// Bad usage: getopt's own complaint (if any), then ministat's reason.
    Usage {
        getopt: Option<String>,
        reason: &'static str,
    },
}

/// Runs `benchlab ministat`; returns the exit status.
pub(crate) fn run(
    args: MinistatArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<i32> {
    let posixly_correct = std::env::var_os("POSIXLY_CORRECT").is_some();
    let args = with_leading_escape(args.args, std::env::args_os());
    let invocation = match parse(&args, default_width(), posixly_correct) {
        Parsed::Run(invocation) => invocation,
        Parsed::Help => {
            out.write_all(usage_text(true).as_bytes())?;
            return Ok(0);
        }
        Parsed::Usage { getopt, reason } => {
            if let Some(message) = getopt {
                writeln!(err, "{PROGRAM}: {message}")?;
            }
            writeln!(err, "{reason}")?;
            err.write_all(usage_text(false).as_bytes())?;
            return Ok(2);
        }
    };
    let stdin = [OsString::from("-")];
    let files = if invocation.files.is_empty() {
        &stdin[..]
    } else {
        &invocation.files
    };
    let paths: Vec<&Path> = files.iter().map(Path::new).collect();
    let datasets = read_datasets(&paths, &invocation.read).map_err(InputError::from)?;
    let analysis = Analysis::new(datasets, &invocation.options).map_err(InputError::from)?;
    if invocation.json {
        serde_json::to_writer_pretty(&mut *out, &analysis).context("writing JSON")?;
        writeln!(out)?;
    } else {
        out.write_all(analysis.text().as_bytes())?;
    }
    Ok(0)
}

/// clap swallows a `--` given first after the subcommand's name, but to ministat it means
/// "no options follow" (`ministat -- -n` reads a file named `-n`): recover it from the
/// process's arguments when they are the parsed ones behind a `--`.
fn with_leading_escape(
    parsed: Vec<OsString>,
    process: impl Iterator<Item = OsString>,
) -> Vec<OsString> {
    let mut process = process.skip(1).skip_while(|a| a != "ministat").skip(1);
    if process.next().is_some_and(|a| a == "--") {
        let rest: Vec<OsString> = process.collect();
        if rest == parsed {
            return std::iter::once(OsString::from("--")).chain(rest).collect();
        }
    }
    parsed
}

/// ministat's default width: `$COLUMNS` or the terminal's width − 2 when standard output is a
/// terminal, else 74.
fn default_width() -> usize {
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        return MinistatOptions::default().width;
    }
    match std::env::var_os("COLUMNS").filter(|c| !c.is_empty()) {
        // atoi(3): the leading number, 0 when there is none.
        Some(columns) => usize::try_from(strtol(columns.as_bytes()).0 as i32)
            .unwrap_or(0)
            .min(MAX_WIDTH),
        None => match terminal_size::terminal_size_of(&stdout) {
            Some((terminal_size::Width(w), _)) if w > 0 => usize::from(w).saturating_sub(2),
            _ => MinistatOptions::default().width,
        },
    }
}

/// Parses the arguments like ministat's `getopt(argc, argv, "AC:c:d:snw:")` loop (glibc).
fn parse(args: &[OsString], width: usize, posixly_correct: bool) -> Parsed {
    let mut reading = Reading {
        options: MinistatOptions {
            width,
            ..MinistatOptions::default()
        },
        read: ReadOptions::default(),
        confidence: None,
    };
    let mut json = false;
    let mut generation = None;
    let mut files = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_bytes();
        i += 1;
        match arg {
            b"--" => {
                files.extend_from_slice(&args[i..]);
                break;
            }
            b"--legacy" | b"--accurate" => {
                let flavor = if arg == b"--legacy" {
                    Flavor::Legacy
                } else {
                    Flavor::Accurate
                };
                // Two generations asked for is a mistake, not a choice of the last one.
                if generation.replace(flavor).is_some_and(|f| f != flavor) {
                    return Parsed::Usage {
                        getopt: None,
                        reason: "--legacy and --accurate are two ministat generations: give one.",
                    };
                }
                reading.options.flavor = flavor;
            }
            b"--json" => json = true,
            b"--help" => return Parsed::Help,
            [b'-', letters @ ..] if !letters.is_empty() => {
                match reading.cluster(letters, args.get(i)) {
                    Ok(took_next) => i += usize::from(took_next),
                    Err(usage) => return usage,
                }
            }
            _ if posixly_correct => {
                files.extend_from_slice(&args[i - 1..]);
                break;
            }
            _ => files.push(args[i - 1].clone()),
        }
    }
    if files.len() > crate::stats::ministat::MAX_DATASETS {
        return Parsed::Usage {
            getopt: None,
            reason: "Too many datasets.",
        };
    }
    let Reading {
        mut options,
        read,
        confidence,
    } = reading;
    options.confidence = confidence.unwrap_or_default();
    Parsed::Run(Invocation {
        options,
        read,
        files,
        json,
    })
}

/// The options as the getopt loop fills them.
struct Reading {
    options: MinistatOptions,
    read: ReadOptions,
    /// ministat keeps the last level accepted: a later bad `-c` is then silently ignored.
    confidence: Option<Confidence>,
}

impl Reading {
    /// The letters of one `-…` argument (`Ans`, `c95`): a letter that takes a value takes the
    /// rest of the argument, or else the next argument (then `Ok(true)`). `Err` is bad usage.
    fn cluster(&mut self, letters: &[u8], next: Option<&OsString>) -> Result<bool, Parsed> {
        for (k, &letter) in letters.iter().enumerate() {
            match letter {
                b'A' => self.options.stats_only = true,
                b'n' => self.options.summary_only = true,
                b's' => self.options.separate_bars = true,
                b'C' | b'c' | b'd' | b'w' => {
                    let rest = &letters[k + 1..];
                    let (value, took_next) = match next {
                        _ if !rest.is_empty() => (rest, false),
                        Some(next) => (next.as_bytes(), true),
                        None => {
                            return Err(Parsed::Usage {
                                getopt: Some(format!(
                                    "option requires an argument -- '{}'",
                                    char::from(letter)
                                )),
                                reason: "Unknown option",
                            })
                        }
                    };
                    self.value(letter, value).map_err(|reason| Parsed::Usage {
                        getopt: None,
                        reason,
                    })?;
                    return Ok(took_next);
                }
                _ => {
                    return Err(Parsed::Usage {
                        getopt: Some(format!(
                            "invalid option -- '{}'",
                            String::from_utf8_lossy(&[letter])
                        )),
                        reason: "Unknown option",
                    })
                }
            }
        }
        Ok(false)
    }

    /// The value of `-C`, `-c`, `-d` or `-w`.
    fn value(&mut self, letter: u8, value: &[u8]) -> Result<(), &'static str> {
        match letter {
            b'C' => column(value).map(|c| self.read.column = c),
            b'c' => level(value, self.confidence).map(|c| self.confidence = Some(c)),
            b'd' => delimiters(value).map(|d| self.read.delimiters = d),
            _ => plot_width(value).map(|w| self.options.width = w),
        }
    }
}

/// `-C`: `strtol` of the whole text, truncated to a C `int`, positive.
fn column(value: &[u8]) -> Result<usize, &'static str> {
    let (number, used) = strtol(value);
    if used != value.len() {
        return Err("Invalid column number.");
    }
    usize::try_from(number as i32)
        .ok()
        .filter(|&c| c > 0)
        .ok_or("Column number should be positive.")
}

/// `-c`: a number of the table; a number outside it is accepted when an earlier `-c` was.
fn level(value: &[u8], earlier: Option<Confidence>) -> Result<Confidence, &'static str> {
    match (Confidence::parse_ministat(value), earlier) {
        (Ok(level), _) => Ok(level),
        (Err(ConfidenceError::Unsupported), Some(level)) => Ok(level),
        (Err(e), _) => Err(e.message()),
    }
}

/// `-d`: any nonempty set of bytes.
fn delimiters(value: &[u8]) -> Result<Vec<u8>, &'static str> {
    if value.is_empty() {
        return Err("Can't use empty delimiter string");
    }
    Ok(value.to_vec())
}

/// `-w`: `strtol` of the whole text, truncated to a C `int`, not negative, at most
/// [`MAX_WIDTH`].
fn plot_width(value: &[u8]) -> Result<usize, &'static str> {
    let (number, used) = strtol(value);
    if used != value.len() {
        return Err("Invalid width, not a number.");
    }
    let width = usize::try_from(number as i32).map_err(|_| "Unable to move beyond left margin.")?;
    if width > MAX_WIDTH {
        return Err("Width too large: give at most 10000 columns.");
    }
    Ok(width)
}

/// ministat's usage text (after its one-line reason); with `extended`, benchlab's additions.
fn usage_text(extended: bool) -> String {
    format!(
        "Usage: {PROGRAM} [-C column] [-c confidence] [-d delimiter(s)] [-Ans] [-w width] \
         [file [file ...]]\n{}",
        flag_lines(extended)
    )
}

/// The flags, one line each, as ministat's usage text lists them; with `extended`, benchlab's
/// additions.
fn flag_lines(extended: bool) -> String {
    let levels: Vec<String> = Confidence::ALL
        .iter()
        .map(|c| format!("{}%", fmt_g(c.percent(), 6)))
        .collect();
    let mut text = format!(
        "\tconfidence = {{{}}}\n\
         \t-A : print statistics only. suppress the graph.\n\
         \t-C : column number to extract (starts and defaults to 1)\n\
         \t-d : delimiter(s) string, default to \" \\t\"\n\
         \t-n : print summary statistics only, no graph/test\n\
         \t-s : print avg/median/stddev bars on separate lines\n\
         \t-w : width of graph/test output (default 74 or terminal width)\n",
        levels.join(", ")
    );
    if extended {
        // Lines kept under 80 columns: clap would wrap longer ones without their indent.
        text.push_str(
            "\t-c : confidence level of the t test, one of those above (default 95)\n\
             \t--legacy : behave as Debian's ministat 20150715 (upper median of an\n\
             \t           even count, relative interval = absolute one / reference mean)\n\
             \t--accurate : Stddev exactly rounded (two-pass variance) instead of the\n\
             \t             one-pass sums of FreeBSD's ministat; otherwise as the default\n\
             \t--json : print the numbers as JSON instead of the tables\n\
             \t--help : print this help\n",
        );
    }
    text
}

#[cfg(test)]
mod tests;
