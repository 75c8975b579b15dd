#!/usr/bin/env python3
"""A corpus of hostile inputs for benchlab, built from classes of faults (issue 33), and a runner.

    hostile_corpus.py BENCHLAB WORK TEMPLATES [--seed N] [--only CLASS,...]

TEMPLATES holds `trials/` and `alternating/`, two benchlab results directories made by a real
run, and `netbenches/`, a netbenches run with pmc graphs (tests/data/netbenches/002). Each case
is a fresh copy of one template (or a campaign file) damaged in one way, and one benchlab
command on it, run under a 1 GiB address-space limit (`prlimit --as`) and a time limit. A case
fails when benchlab panics, is killed (out of memory, a signal), hangs, writes outside the
case's directory, or refuses its input (exit 2) with a message that is not one line of at most
300 characters. Prints a line per failure and a table per class; exits 1 on any failure.
"""

import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import time

LIMIT_AS = 1 << 30
TIMEOUT_S = 60


def campaign(**over):
    """A small valid campaign file's text, keys replaced by `over` (TOML snippets)."""
    parts = {
        "head": 'title = "hostile"\niterations = 2\ndesign = "trials"\nconfig_sets = ["forwarding"]\n',
        "trial": "[trial]\nduration = 5\nwarmup = 1\ncooldown = 1\n",
        "versions": '[[versions]]\nname = "a"\n',
        "profiles": '[[profiles]]\nname = "inet4"\naf = "inet4"\nframe_size = 64\n'
        'src = "198.18.10.1:2000-198.18.10.20"\ndst = "198.19.10.1:2000-198.19.10.100"\nrate = "max"\n',
        "extra": "",
    }
    parts.update(over)
    return "\n".join(parts[k] for k in ["head", "trial", "versions", "profiles", "extra"])


def toml_str(s):
    return json.dumps(s)  # a TOML basic string accepts JSON's escapes for these characters


BAD_NAMES = [
    "", "a/b", "..", "../x", "x/../../../escaped", "/abs", "a\x01b", "\x1b[31mred\x1b[0m",
    "-flag", "a" * 300, "é" * 200, "a\nb", "a\tb", ".", "a\\b",
]


def campaign_cases(rng):
    cases = []
    for n in BAD_NAMES:
        q = toml_str(n)
        cases.append(("name-version", campaign(versions=f"[[versions]]\nname = {q}\n")))
        cases.append(("name-profile", campaign(profiles=f'[[profiles]]\nname = {q}\naf = "inet4"\nframe_size = 64\nrate = "max"\n')))
        cases.append(("name-config", campaign(head=f'title = "h"\niterations = 2\ndesign = "trials"\nconfig_sets = [{q}]\n')))
        cases.append(("name-goal", campaign(profiles='[[profiles]]\nname = "t"\naf = "inet4"\nframe_size = 64\nmeasure = "throughput"\n',
                                             extra=f"[search]\npreset = \"mlrsearch\"\n[[search.goals]]\nname = {q}\nloss = 0.0\n")))
    for key in ["a=b", "../../etc/passwd", "", "net.core x", "k\n", "net/../../x"]:
        cases.append(("sysctl-key", campaign(versions=f'[[versions]]\nname = "a"\n[versions.sysctls]\n{toml_str(key)} = "1"\n')))
    for cmds in ['[""]', "[[]]", '[[""]]']:
        cases.append(("commands", campaign(versions=f'[[versions]]\nname = "a"\ncommands = {cmds}\n')))
    cases.append(("af", campaign(profiles='[[profiles]]\nname = "p"\naf = "inet6"\nframe_size = 64\nsrc = "198.18.10.1"\ndst = "198.19.10.1"\nrate = "max"\n')))
    cases.append(("af", campaign(profiles='[[profiles]]\nname = "p"\naf = "inet4"\nframe_size = 64\nsrc = "2001:2::1"\ndst = "2001:2:0:8000::1"\nrate = "max"\n')))
    for lab in ["dut_cpu = 1\ngenerator_cpu = 1", "dut_cpu = 4096", 'dut_mac = "zz:zz"', 'mac = "00:11:22:33:44"']:
        cases.append(("lab", campaign(extra=f"[lab]\n{lab}\n")))
    cases.append(("alternating", campaign(head='title = "h"\niterations = 2\ndesign = "alternating"\nconfig_sets = ["forwarding", "nft-stateless"]\n',
                                          extra="[alternating]\nmin_blocks = 100000\nmax_duration = 10\n")))
    versions = "".join(f'[[versions]]\nname = "v{i}"\n' for i in range(300))
    profiles = "".join(f'[[profiles]]\nname = "p{i}"\naf = "inet4"\nframe_size = 64\nrate = "max"\n' for i in range(300))
    cases.append(("plan-size", campaign(head='title = "h"\niterations = 10000\ndesign = "trials"\nconfig_sets = ["forwarding"]\n',
                                        versions=versions, profiles=profiles)))
    cases.append(("huge-field", campaign(head=f'title = "{"A" * 20_000_000}"\niterations = 2\nconfig_sets = ["forwarding"]\n')))
    cases.append(("deep-toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n"))
    for _ in range(20):
        n = rng.randint(1, 5000)
        cases.append(("garbage", bytes(rng.randrange(256) for _ in range(n))))
    return [(cls, ("run-check", text)) for cls, text in cases]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)


def files_like(root, pattern):
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.join(d, n) for n in names if pattern(n)]
    return sorted(out)


def mutate_text(path, how, rng):
    """Damages one file in place, `how` naming the damage."""
    data = open(path, "rb").read()
    if how == "empty":
        data = b""
    elif how == "cut":
        data = data[: max(0, len(data) - rng.randint(1, 8))]
    elif how == "nul":
        data = b"\0" * len(data)
    elif how == "multibyte":
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        at = rng.randint(0, len(lines[i]))
        lines[i] = lines[i][:at] + "é€😀".encode() + lines[i][at:]
        data = b"\n".join(lines)
    elif how == "invalid-utf8":
        at = rng.randint(0, len(data))
        data = data[:at] + b"\xff\xfe\xc3" + data[at:]
    elif how == "long-line":
        data = data + b"9" * 40_000_000 + b"\n"
    elif how == "control":
        data = data.replace(b"a", b"a\x1b[2J", 3)
    elif how == "duplicate-rows":
        lines = data.rstrip(b"\n").split(b"\n")
        data = b"\n".join([lines[0]] + [l for l in lines[1:] for _ in (0, 1)]) + b"\n"
    elif how == "negative":
        data = data.replace(b",", b",-", 4)
    elif how == "reverse-rows":
        lines = data.rstrip(b"\n").split(b"\n")
        data = b"\n".join([lines[0]] + lines[1:][::-1]) + b"\n"
    open(path, "wb").write(data)


def special(path, kind):
    """Replaces a file by a FIFO, a directory, a symlink out of the tree, or a loop."""
    if os.path.lexists(path):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        os.mkdir(path)
    elif kind == "symlink-out":
        os.symlink("/etc/passwd", path)
    elif kind == "symlink-loop":
        os.symlink(os.path.basename(path), path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)


TEXT_DAMAGE = ["empty", "cut", "nul", "multibyte", "invalid-utf8", "long-line", "control"]
SPECIAL = ["fifo", "dir", "symlink-out", "symlink-loop", "dev-zero"]


def dir_cases(templates, rng):
    """(class, (command, template, damage list)) for the results directories."""
    cases = []
    nb = os.path.join(templates, "netbenches")
    picks = {
        "nb-sender": lambda n: n.endswith(".sender"),
        "nb-receiver": lambda n: n.endswith(".receiver"),
        "nb-info": lambda n: n.endswith(".info"),
        "nb-pmc": lambda n: n.endswith(".pmc.graph"),
    }
    for cls, pick in picks.items():
        for how in TEXT_DAMAGE + SPECIAL:
            for command in ["report", "import"]:
                cases.append((cls, (command, "netbenches", [(pick, how)])))
    cases.append(("nb-pmc", ("report", "netbenches", [(picks["nb-pmc"], "deep-graph")])))
    for tpl in ["trials", "alternating"]:
        picks = {
            "samples": lambda n: n == "samples.csv",
            "meta": lambda n: n == "meta.json",
            "campaign": lambda n: n == "campaign.toml",
            "lab": lambda n: n == "lab.json",
            "phases": lambda n: n == "phases.csv",
            "series": lambda n: n == "series.csv",
        }
        for cls, pick in picks.items():
            for how in TEXT_DAMAGE + SPECIAL + ["duplicate-rows", "negative", "reverse-rows"]:
                for command in ["report", "resume-check", "import"]:
                    cases.append((f"{tpl}-{cls}", (command, tpl, [(pick, how)])))
        for how in ["fifo", "symlink-out", "dir"]:
            cases.append((f"{tpl}-lock", ("report", tpl, [(lambda n: n == ".benchlab.lock", how)])))
            cases.append((f"{tpl}-lock", ("resume-check", tpl, [(lambda n: n == ".benchlab.lock", how)])))
        for goal in ["x/../../../escaped", "../../up", "a\x1b[31m"]:
            cases.append((f"{tpl}-stored-name", ("report", tpl, [(lambda n: n == "campaign.toml", ("rename-version", goal))])))
    for kind in ["file", "proc", "loop", "under-file"]:
        cases.append(("output-path", ("report-o-" + kind, "netbenches", [])))
    return cases


def deep_graph(path):
    """A pmcstat call graph of one long chain of long names (~25 MB)."""
    with open(path, "w") as f:
        f.write(" %  cum.  total  callers  function\n")
        for depth in range(20000):
            f.write(" " * min(depth, 2000) + "100.0%  [1000]  " + "f" * 1200 + str(depth) + " @ /k\n")


def build_dir_case(case_dir, templates, tpl, damages, rng):
    root = os.path.join(case_dir, "in")
    shutil.copytree(os.path.join(templates, tpl), root, symlinks=True)
    for pick, how in damages:
        targets = files_like(root, pick)
        if not targets and callable(pick) and pick(".benchlab.lock"):
            targets = [os.path.join(root, ".benchlab.lock")]
        if not targets:
            return False
        path = rng.choice(targets)
        if how == "deep-graph":
            deep_graph(path)
        elif isinstance(how, tuple):
            # The first version's name replaced in the stored campaign.
            text = open(path).read()
            text = re.sub(r'(\[\[versions\]\]\nname = )"[^"]*"', lambda m: m.group(1) + toml_str(how[1]), text, count=1)
            open(path, "w").write(text)
        elif how in SPECIAL:
            special(path, how)
        else:
            mutate_text(path, how, rng)
    return True


def argv_of(command, case_dir):
    out = os.path.join(case_dir, "out")
    inp = os.path.join(case_dir, "in")
    if command == "run-check":
        return ["run", "--check", os.path.join(case_dir, "campaign.toml")]
    if command == "report":
        return ["report", inp, "-o", out]
    if command == "resume-check":
        return ["run", "--resume", inp, "--check"]
    if command == "import":
        return ["history", "--db", os.path.join(case_dir, "h.db"), "import", inp]
    if command.startswith("report-o-"):
        kind = command[len("report-o-"):]
        target = {
            "file": os.path.join(case_dir, "a-file"),
            "proc": "/proc/self/hostile-out",
            "loop": os.path.join(case_dir, "loop"),
            "under-file": os.path.join(case_dir, "a-file", "sub"),
        }[kind]
        write(os.path.join(case_dir, "a-file"), "x")
        if kind == "loop":
            os.symlink("loop", os.path.join(case_dir, "loop"))
        return ["report", inp, "-o", target]
    raise ValueError(command)


def snapshot(path):
    """Names and sizes of everything under `path`, symlinks not followed."""
    seen = {}
    for d, dirs, names in os.walk(path):
        for n in names + dirs:
            p = os.path.join(d, n)
            try:
                st = os.lstat(p)
                seen[p] = st.st_size if stat.S_ISREG(st.st_mode) else -1
            except OSError:
                pass
    return seen


def run_case(bench, argv, cwd, stdin=None):
    cmd = ["prlimit", f"--as={LIMIT_AS}", "--", bench] + argv
    started = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdin=stdin or subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, b"", time.time() - started
    return p.returncode, p.stderr, time.time() - started


def judge(status, stderr, must_refuse):
    """What is wrong with an outcome, or None."""
    if status is None:
        return "hang (no end within %d s)" % TIMEOUT_S
    if status < 0 or status > 2:
        return f"killed or crashed (status {status}): {stderr[-300:]!r}"
    text = stderr.decode("utf-8", "replace")
    if b"panicked" in stderr:
        return f"panic: {text[:300]!r}"
    if status == 2:
        lines = [l for l in text.split("\n") if l]
        if len(lines) != 1 or len(lines[0]) > 300:
            return f"refusal not one line of <= 300 chars ({len(lines)} lines, {max(map(len, lines or ['']))} chars)"
    if must_refuse and status == 0:
        return "accepted what must be refused"
    if status == 1:
        return f"exit 1 on bad input (2 expected): {text[:200]!r}"
    return None


def main():
    bench, work, templates = (os.path.abspath(a) for a in sys.argv[1:4])
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None
    rng = random.Random(seed)
    outside = os.path.join(work, "outside")
    os.makedirs(outside, exist_ok=True)
    write(os.path.join(outside, "sentinel"), "untouched")
    cases = campaign_cases(rng) + dir_cases(templates, rng)
    cases.append(("ministat", ("ministat-zero", None, [])))
    cases.append(("ministat", ("ministat-long", None, [])))
    stats, failures = {}, []
    for n, (cls, spec) in enumerate(cases):
        if only and not any(cls.startswith(o) for o in only):
            continue
        case_dir = os.path.join(work, "cases", f"{n:04d}")
        os.makedirs(case_dir)
        stdin = None
        if spec[0] == "run-check":
            write(os.path.join(case_dir, "campaign.toml"), spec[1])
            argv, must_refuse = argv_of("run-check", case_dir), True
        elif spec[0] == "ministat-zero":
            argv, must_refuse = ["ministat"], True
            stdin = subprocess.Popen(["head", "-c", "300000000", "/dev/zero"], stdout=subprocess.PIPE).stdout
        elif spec[0] == "ministat-long":
            write(os.path.join(case_dir, "long"), "1" * 50_000_000)
            argv, must_refuse = ["ministat", os.path.join(case_dir, "long")], True
        else:
            command, tpl, damages = spec
            if not build_dir_case(case_dir, templates, tpl, damages, rng):
                continue
            argv, must_refuse = argv_of(command, case_dir), command.startswith("report-o-")
        before = snapshot(outside), sorted(os.listdir(work))
        status, stderr, secs = run_case(bench, argv, case_dir, stdin)
        after = snapshot(outside), sorted(os.listdir(work))
        wrong = judge(status, stderr, must_refuse)
        if before != after:
            wrong = (wrong + "; " if wrong else "") + "wrote outside its directory"
        row = stats.setdefault(cls, {"cases": 0, "0": 0, "1": 0, "2": 0, "failed": 0})
        row["cases"] += 1
        row[str(status) if status in (0, 1, 2) else "failed"] += 0 if status not in (0, 1, 2) else 1
        if wrong:
            row["failed"] += 1
            failures.append(f"{cls} #{n} `benchlab {' '.join(a[:60] for a in argv)}`: {wrong}")
        shutil.rmtree(case_dir, ignore_errors=True)
    for f in failures:
        print("FAIL", f)
    print(f"{'class':<26} {'cases':>6} {'exit 0':>7} {'exit 1':>7} {'exit 2':>7} {'failed':>7}")
    for cls, r in sorted(stats.items()):
        print(f"{cls:<26} {r['cases']:>6} {r['0']:>7} {r['1']:>7} {r['2']:>7} {r['failed']:>7}")
    total = sum(r["cases"] for r in stats.values())
    print(f"{total} cases, {len(failures)} failed (limits: {LIMIT_AS >> 20} MiB address space, {TIMEOUT_S} s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
