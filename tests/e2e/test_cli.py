"""`tierjit run` and `tierjit explain` end to end, in subprocesses with the project's Python.

- Every script in examples/ and in tests/e2e/scripts/ gives byte-identical stdout and stderr and
  the same exit status under `tierjit run` as under `python` (examples/tour.py prints measured
  times and call counts, which differ between any two runs: there the digits are masked).
- `--trace` writes JSON that validates against a JSON schema of the trace-event format written
  here, with compile events on the compiler thread and tier-up and deopt instants (and OSR
  entries when tierjit has OSR); `--plot` writes a PNG that opens; `--perf` writes one perf map
  line per native function, inside executable memory; `--report` has a row with numbers for
  every kernel of `make bench`.
- Bad command lines fail with status 2 and a message naming what is wrong.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tierjit import config as jit_config

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
PROBES = SCRIPTS / "probes"
PY = sys.executable
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
TEST_SCRIPTS = sorted(SCRIPTS.glob("*.py"))
MEASURING = {"tour.py"}          # examples whose output holds measured figures
TIMEOUT = 300


def run(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([PY, *args], capture_output=True, cwd=cwd, timeout=TIMEOUT,
                          env=env)


def tierjit(*args: str, **kw) -> subprocess.CompletedProcess:
    return run("-m", "tierjit", *args, **kw)


# What a measuring example's output says of timing: numbers, with the padding their width
# changes (format widths like {t:7.1f}); whether the background build had finished when the
# first call returned; and explain's lines of specialisations: whether a function got hot at
# its first call (hot_seconds, on a loaded machine) or later, with a profile of calls
# passing the same values (a value-specialised version), decides which versions it lists.
TIMING = ((rb" *[-+]?\d[\d.,]*", b"#"),
          (rb"compiled on the [\w-]+ thread in# ms|still compiling", b"<build>"),
          (rb"\n +\w+\([^\n]*\)(:| guards:| deopts:)[^\n]*", b""))


def _masked(out: bytes) -> bytes:
    for pattern, repl in TIMING:
        out = re.sub(pattern, repl, out)
    return out


def assert_same(script: Path, args: tuple[str, ...] = (), mask: bool = False) -> None:
    rel = os.path.relpath(script, ROOT)
    ref = run(rel, *args)
    got = tierjit("run", rel, *args)
    out_ref, out_got = ref.stdout, got.stdout
    if mask:
        out_ref, out_got = (_masked(o) for o in (out_ref, out_got))
    assert got.returncode == ref.returncode, got.stderr.decode()
    assert out_got == out_ref
    assert got.stderr == ref.stderr


# -- byte-identical behaviour --------------------------------------------------------------------

@pytest.mark.parametrize("script", TEST_SCRIPTS, ids=lambda p: p.name)
def test_run_is_identical_to_python_on_test_scripts(script):
    assert_same(script, ("first", "--second", "3"))


@pytest.mark.parametrize("code", ["0", "3", "a message"])
def test_exit_codes_and_messages_are_python_s(code):
    assert_same(SCRIPTS / "exits.py", (code,))


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_run_is_identical_to_python_on_examples(script):
    assert_same(script, mask=script.name in MEASURING)


OSR_THEN_RAISE = """
import numpy as np


def f(a, n):
    s = 0
    for i in range(n):
        s += a[i % 7]
    return a[n // 1000]


f(np.arange(7), 100)
f(np.arange(7), 20_000)
"""


@pytest.mark.parametrize("tier_up", ["osr", "baseline"])
def test_a_traceback_after_a_loop_moved_into_native_code_is_python_s(tmp_path, tier_up):
    # the loop moves into native code mid-call (OSR from counting tier 0, or a tier-up out of
    # baseline code), then the call raises: no frame of the loop's handover or of tierjit's
    (tmp_path / "app.py").write_text(OSR_THEN_RAISE)
    env = dict(os.environ, TIERJIT_WATCH_MS="0", TIERJIT_BACKGROUND="0",
               TIERJIT_OSR_BACKEDGES="1000", TIERJIT_TIERUP_MS="0",
               TIERJIT_WATCH_SIZE="never" if tier_up == "osr" else "1000")
    ref = run("app.py", cwd=tmp_path)
    got = tierjit("run", "app.py", cwd=tmp_path, env=env)
    logged = tierjit("run", "app.py", cwd=tmp_path, env=dict(env, TIERJIT_LOG="1"))
    assert re.search(rb"tierjit \+\S+ (osr|tier-up) ", logged.stderr), logged.stderr.decode()
    # tier-0 code has no columns: CPython's carets under a line are left out of both
    carets = re.compile(rb"^ *[~^]+ *$\n", re.MULTILINE)
    assert got.returncode == ref.returncode == 1
    assert carets.sub(b"", got.stderr) == carets.sub(b"", ref.stderr)


def test_run_from_another_directory_with_a_relative_path(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mod.py").write_text("def twice(x):\n    return 2 * x\n")
    (tmp_path / "sub" / "main.py").write_text(
        "import sys, mod\nprint(__file__, sys.argv, sys.path[0], mod.twice(21), "
        "type(mod.twice).__name__ == 'function', __name__, __spec__)\n")
    ref = run("sub/main.py", "x", cwd=tmp_path)
    got = tierjit("run", "sub/main.py", "x", cwd=tmp_path)
    assert ref.returncode == got.returncode == 0
    # the one line differs only where it reports whether twice is a plain function
    assert ref.stdout.replace(b" True ", b" ? ") == got.stdout.replace(b" False ", b" ? ")
    assert b" False " in got.stdout          # mod.twice is jitted: the hook saw the module


def test_functions_of_the_script_and_modules_beside_it_are_jitted(tmp_path):
    (tmp_path / "helper.py").write_text("def inc(x):\n    return x + 1\n")
    (tmp_path / "main.py").write_text(
        "import helper\nfrom tierjit.runtime.dispatch import dispatcher_of\n"
        "def f(x):\n    return helper.inc(x)\n"
        "print(dispatcher_of(f) is not None, dispatcher_of(helper.inc) is not None)\n")
    got = tierjit("run", str(tmp_path / "main.py"))
    assert got.stdout == b"True True\n", got.stderr.decode()
    got = tierjit("run", "--exclude", "helper", "--exclude", "__main__.f",
                  str(tmp_path / "main.py"))
    assert got.stdout == b"False False\n", got.stderr.decode()


# -- trace, plot, perf map, report ------------------------------------------------------------------

PH = {"type": "string", "enum": ["X", "i", "M"]}
TRACE_SCHEMA = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "traceEvents": {"type": "array", "items": {"$ref": "#/$defs/event"}},
        "displayTimeUnit": {"enum": ["ms", "ns"]},
    },
    "$defs": {
        "event": {
            "type": "object",
            "required": ["name", "ph", "pid", "tid"],
            "properties": {
                "name": {"type": "string"}, "cat": {"type": "string"}, "ph": PH,
                "pid": {"type": "integer"}, "tid": {"type": "integer"},
                "ts": {"type": "number", "minimum": 0}, "dur": {"type": "number", "minimum": 0},
                "s": {"enum": ["g", "p", "t"]}, "args": {"type": "object"},
            },
            "allOf": [
                {"if": {"properties": {"ph": {"const": "X"}}},
                 "then": {"required": ["ts", "dur"]}},
                {"if": {"properties": {"ph": {"const": "i"}}},
                 "then": {"required": ["ts", "s"]}},
                {"if": {"properties": {"ph": {"const": "M"}}},
                 "then": {"properties": {"name": {"enum": ["thread_name", "process_name"]},
                                         "args": {"required": ["name"]}}}},
            ],
        },
    },
}
# OSR entries are expected where tierjit has OSR and it is on (the subprocesses inherit the
# environment, hence this process's tierjit.config)
HAS_OSR = (importlib.util.find_spec("tierjit.runtime.osr") is not None
           and getattr(jit_config, "osr_backedges", None) is not None)


@pytest.fixture(scope="module")
def deopt_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("trace")
    trace, png = out / "run.json", out / "run.png"
    # watched from the first call, so that scan's one long call moves into native code by OSR
    # (not predicted long by its argument: it would run baseline code from its start)
    env = dict(os.environ, TIERJIT_WATCH_MS="0", TIERJIT_WATCH_SIZE="never")
    got = tierjit("run", "--trace", str(trace), "--plot", str(png), "--report",
                  str(PROBES / "deopts.py"), env=env)
    assert got.returncode == 0, got.stderr.decode()
    return got, json.loads(trace.read_text()), png


def test_trace_validates_and_holds_compiles_tier_ups_and_deopts(deopt_run):
    jsonschema = pytest.importorskip("jsonschema")
    _, trace, _ = deopt_run
    jsonschema.validate(trace, TRACE_SCHEMA)
    events = trace["traceEvents"]
    threads = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    compiles = [e for e in events if e["ph"] == "X" and e["name"].startswith("compile ")]
    assert any(threads[e["tid"]] == "tierjit-compiler" and e["cat"] == "opt"
               and "factorial" in e["name"] and e["dur"] > 0 for e in compiles)
    instants = {(e["cat"], e["name"].split()[1].split("(")[0]) for e in events
                if e["ph"] == "i"}
    assert ("tier-up", "factorial") in instants
    assert ("deopt", "factorial") in instants
    deopt = next(e for e in events if e["ph"] == "i" and e["cat"] == "deopt")
    assert {"line", "op"} <= set(deopt["args"])
    tiers = [e for e in events if e["ph"] == "X" and e["cat"] == "tier"]
    assert {"python", "opt"} <= {e["name"] for e in tiers}
    if HAS_OSR:
        assert ("osr", "scan") in instants


def test_plot_is_a_png_of_the_run(deopt_run):
    _, _, png = deopt_run
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = pytest.importorskip("matplotlib.image").imread(str(png))
    height, width = image.shape[:2]
    assert width == 1000 and height > 200           # 10 in x 100 dpi, a panel per function


def table_rows(report: str) -> dict[str, list[str]]:
    """The report's rows by function name, each cell's text joined over the lines rich folded
    it into."""
    rows: dict[str, list[str]] = {}
    current: list[list[str]] | None = None
    for line in report.splitlines():
        if not line.startswith("│"):
            current = None
            continue
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if cells[0]:
            current = [[c] for c in cells]
            rows[cells[0]] = current           # type: ignore[assignment]
        elif current is not None:
            for parts, c in zip(current, cells):
                if c:
                    parts.append(c)
    # (a name rich folded, under load when other cells grow, is joined without a space)
    return {"".join(parts[0]): [" ".join(p) for p in parts] for parts in rows.values()}


def test_report_of_the_deopt_run(deopt_run):
    got, _, _ = deopt_run
    err = got.stderr.decode()
    assert "tierjit report" in err
    rows = table_rows(err)
    name, calls, tier, times, compiles, deopts, specs = rows["factorial"]
    # calls through the dispatcher (of the script's 1531): once factorial is hot (by count or
    # by time), baseline code takes them until LLVM's is installed
    assert 1 <= int(calls) <= 1531 and tier == "opt"
    assert re.search(r"\bopt \d+(\.\d+)? (ms|s)", compiles)
    assert int(deopts.split(":")[0]) >= 1 and "line " in deopts
    assert "(int) opt" in specs
    assert "total" in rows


def test_perf_map_has_one_line_per_native_function_inside_code_memory():
    got = tierjit("run", "--perf", str(PROBES / "perf_regions.py"))
    assert got.returncode == 0, got.stderr.decode()
    info = json.loads(got.stdout)
    assert info["lines"] == len(info["names"]) > 0
    assert all(info["inside_executable"]) and info["sizes_positive"]
    assert info["overlaps"] == 0 and len(set(info["names"])) == len(info["names"])
    named = {n.removeprefix("tierjit:") for n in info["names"]}
    assert set(info["engine_functions"]) <= named
    assert any("poly" in n for n in named) and any("total" in n for n in named)


def test_perf_map_is_off_by_default(tmp_path):
    script = tmp_path / "p.py"
    script.write_text("import os\nprint(os.path.exists(f'/tmp/perf-{os.getpid()}.map'))\n")
    assert tierjit("run", str(script)).stdout == b"False\n"


def test_report_covers_every_bench_kernel():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from kernels import KERNELS
        mods = {k: __import__(f"kernels.{k}", fromlist=["JIT"]) for k in KERNELS}
    finally:
        sys.path.remove(str(ROOT / "bench"))
    got = tierjit("run", "--report", "--include", "kernels", str(PROBES / "kernels.py"))
    assert got.returncode == 0, got.stderr.decode()
    assert [ln.split()[0] for ln in got.stdout.decode().splitlines()] == list(KERNELS)
    rows = table_rows(got.stderr.decode())
    for kernel, mod in mods.items():
        name = f"kernels.{kernel}.{mod.ENTRY}"
        assert name in rows, f"no report row for {name}"
        _, calls, tier, times, compiles, deopts, specs = rows[name]
        assert tier == "opt", rows[name]
        assert re.search(r"\bopt \d+(\.\d+)? (ms|s)", compiles), rows[name]
        assert int(calls) >= 1 and int(deopts.split(":")[0]) >= 0 and "opt" in specs
    assert "total" in rows


# -- explain and bad command lines ---------------------------------------------------------------

def test_explain_runs_the_script_then_explains():
    got = tierjit("explain", str(PROBES / "deopts.py") + ":factorial")
    assert got.returncode == 0, got.stderr.decode()
    text = got.stdout.decode()
    assert "factorial (tier=auto):" in text and "factorial(int)" in text
    assert "guards:" in text and "deopts:" in text and "line" in text


def test_explain_no_run_names_the_unsupported_line(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("def f(xs):\n    return [x for x in xs]\n"
                      "if __name__ == '__main__':\n    raise SystemExit('must not run')\n")
    got = tierjit("explain", "--no-run", f"{script}:f")
    assert got.returncode == 0, got.stderr.decode()
    assert "runs as plain CPython: line 2: comprehension" in got.stdout.decode()


@pytest.mark.parametrize("argv, message", [
    (("run", "missing.py"), "can't open file"),
    (("run",), "which script"),
    (("explain", "missing.py:f"), "can't open file"),
    (("explain", "tests/e2e/scripts/exits.py"), "expected script.py:function"),
    (("run", "--trace", "/no/such/dir/t.json", "examples/closest.py"), "does not exist"),
    (("frobnicate",), "invalid choice"),
])
def test_bad_command_lines_fail_clearly(argv, message):
    got = tierjit(*argv)
    assert got.returncode == 2
    assert message in got.stderr.decode()
    assert "Traceback" not in got.stderr.decode()


def test_explain_of_a_missing_function_lists_the_jitted_ones():
    got = tierjit("explain", "--no-run", str(SCRIPTS / "helpers.py") + ":nosuch")
    assert got.returncode == 2
    err = got.stderr.decode()
    assert "no function 'nosuch'" in err and "scale" in err and "checked_div" in err


def test_console_script_and_module_agree():
    exe = Path(PY).parent / "tierjit"
    if not exe.exists():
        pytest.skip("the tierjit console script is not installed in this environment")
    got = subprocess.run([str(exe), "run", "tests/e2e/scripts/exits.py", "5"], cwd=ROOT,
                         capture_output=True, timeout=TIMEOUT)
    assert got.returncode == 5 and got.stdout == b"exiting\n"
