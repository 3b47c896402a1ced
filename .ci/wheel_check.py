"""The product from an installed package: build the wheel from this checkout, install it with the
pinned requirements into a fresh virtual environment outside the checkout, start ``attnviz app``
there from another folder, and drive Chromium to Explore's first heatmap and through every page.

    python .ci/wheel_check.py [--shots DIR] [--keep] [--reuse VENV]

Run it with a Python that has Playwright (the CI environment); Chromium is /usr/bin/chromium.
Exits non-zero on the first thing that is wrong, with the server's log when the app is at fault.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]
WAIT_MS = 120_000  # two cores and a cold torch: the first heatmap can take a while
# url path -> the page's title (its first heading); "" is Explore, the default page
PAGES = {
    "compare": "Compare attention",
    "train": "Train a model",
    "yours": "Your model",
    "data": "Data",
    "evaluate": "Evaluate",
    "learn": "How attention works",
}
BUILT_IN = ("dates-", "toy-fr-")  # the tasks whose models the wheel holds


class CheckFailed(Exception):
    """What the check found wrong."""


def step(text: str) -> None:
    print(f"== {text}", flush=True)


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise CheckFailed(
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return done


def source_copy(dest: Path) -> Path:
    """The checkout's files (tracked, and untracked ones git does not ignore) copied to ``dest``,
    links kept as links: the wheel is built from what the repository holds, never from a stale
    ``build/`` folder or a file left lying in the checkout."""
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT).stdout
    for name in filter(None, listed.split("\0")):
        src, out = ROOT / name, dest / name
        if not src.is_symlink() and not src.is_file():
            continue  # deleted in the work tree
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out, follow_symlinks=False)
    return dest


def build_wheel(tmp: Path) -> Path:
    step("build the wheel")
    src = source_copy(tmp / "src")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(src), "-w", str(tmp / "dist")])
    (wheel,) = (tmp / "dist").glob("attnviz-*.whl")
    print(f"{wheel.name}: {wheel.stat().st_size / 1e6:.1f} MB", flush=True)
    return wheel


def check_contents(wheel: Path) -> None:
    """The wheel holds the library, the app (entry, frame, pages, settings, page assets) and the
    built-in tasks' models, their recipes and the manifest; no tests, no Multi30k model."""
    step("what the wheel holds")
    with zipfile.ZipFile(wheel) as z:
        infos = z.infolist()
        names = {i.filename for i in infos}
        manifest = json.loads(z.read("attnviz/shipped-models/manifest.json"))["models"]
    app_files = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "attnviz_app").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    ]
    built_in = [m["file"] for m in manifest if m["file"].startswith(BUILT_IN)]
    must = [
        "attnviz/__init__.py",
        "attnviz/py.typed",  # PEP 561
        "attnviz/cli/app.py",
        "attnviz_app/app.py",
        "attnviz_app/frame.py",
        "attnviz_app/.streamlit/config.toml",
        *app_files,
        *(f"attnviz/shipped-models/{f}" for f in built_in),
        *(f"attnviz/shipped-models/recipes/{Path(f).stem}.json" for f in built_in),
    ]
    missing = sorted(set(must) - names)
    outside = ("tests/", "benchmarks/", "pretrained/", "docs/")

    def unwanted_file(name: str) -> bool:
        base = name.rpartition("/")[2]
        return (
            name.startswith(outside)
            or base == "build.py"
            or (base.startswith("multi30k-") and base.endswith(".safetensors"))
        )

    unwanted = sorted(filter(unwanted_file, names))
    if missing or unwanted or len(built_in) < 2:
        raise CheckFailed(f"the wheel lacks {missing[:10]} / holds {unwanted[:10]} / built-in models {built_in}")
    models = [i for i in infos if i.filename.endswith(".safetensors")]
    by_top: dict[str, int] = {}
    for i in infos:
        parts = i.filename.split("/")
        top = "/".join(parts[:2]) if i.filename.startswith("attnviz/shipped-models") else parts[0]
        by_top[top] = by_top.get(top, 0) + i.file_size
    for top, size in sorted(by_top.items()):
        print(f"  {top:<32} {size / 1e6:7.2f} MB", flush=True)
    print(
        f"{len(infos)} files, {sum(i.file_size for i in infos) / 1e6:.1f} MB unpacked; {len(models)} models "
        f"(dates, toy-fr), {len(manifest) - len(built_in)} Multi30k models named by the manifest and left out; "
        "no tests/, no benchmarks/",
        flush=True,
    )


def install(tmp: Path, wheel: Path, reuse: Path | None) -> Path:
    started = time.monotonic()
    if reuse is None:
        step("install it with the pinned requirements into a fresh virtual environment")
        venv = tmp / "venv"
        run([sys.executable, "-m", "venv", str(venv)])
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        run([*pip, "-r", str(ROOT / "requirements.txt"), f"{wheel}[app]"], timeout=3600)
    else:  # a developer's rerun: the dependencies are there, only the wheel is new
        step(f"install it into {reuse} (--reuse: the dependencies stay)")
        venv = reuse
        run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--force-reinstall",
                str(wheel),
            ]
        )
    print(f"installed in {time.monotonic() - started:.0f} s into {venv}", flush=True)
    help_text = run([str(venv / "bin" / "attnviz"), "app", "--help"]).stdout
    for flag in ("--models DIR", "--port PORT", "--host HOST", "127.0.0.1"):
        if flag not in " ".join(help_text.split()):
            raise CheckFailed(f"`attnviz app --help` does not document {flag}:\n{help_text}")
    return venv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(tmp: Path, venv: Path, port: int) -> subprocess.Popen:
    step(f"start `attnviz app --port {port}` from {tmp / 'elsewhere'}")
    where = tmp / "elsewhere"
    (where / "home").mkdir(parents=True)
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env |= {"HOME": str(where / "home"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    log = (tmp / "server.log").open("w")
    return subprocess.Popen(
        [str(venv / "bin" / "attnviz"), "app", "--port", str(port)],
        cwd=where,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_healthy(server: subprocess.Popen, url: str, venv: Path) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise CheckFailed(f"the server stopped with exit code {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as r:
                if r.read().decode().strip() == "ok":
                    break
        except OSError:
            time.sleep(1)
    else:
        raise CheckFailed("the server did not answer /_stcore/health within 240 s")
    command = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
    entry = next((c.decode() for c in command if c.endswith(b"attnviz_app/app.py")), "")
    if not entry.startswith(str(venv)):
        raise CheckFailed(f"the server runs {entry or command}, not the installed package's entry file")
    print(f"serving {entry}", flush=True)


def drive(url: str, shots: Path | None, home: Path) -> None:
    """Explore's first heatmap, the sidebar's note on the models the package leaves out, then
    every other page: its title and no error."""
    from playwright.sync_api import sync_playwright

    step("Chromium: Explore's first heatmap, then every page")
    os.environ["HOME"] = str(home)  # Chromium writes its profile under $HOME
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        started = time.monotonic()
        page.goto(f"{url}/", wait_until="domcontentloaded")
        page.locator(".js-plotly-plot .xtick text").first.wait_for(timeout=WAIT_MS)
        ticks = page.locator(".js-plotly-plot .xtick text").all_text_contents()
        print(f"first heatmap after {time.monotonic() - started:.1f} s; its source tokens: {ticks}", flush=True)
        sidebar_text = page.locator("[data-testid=stSidebar] [data-testid=stCaptionContainer]")
        note = sidebar_text.filter(has_text="attnviz app --models DIR").first
        note.wait_for(timeout=WAIT_MS)
        print(f"sidebar note: {' '.join(note.inner_text().split())}", flush=True)
        page.wait_for_timeout(1500)
        if shots:
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / "explore.png"))
        links = [" ".join(t.split()) for t in page.locator("[data-testid=stSidebarNav] a").all_text_contents()]
        print(f"navigation: {links}", flush=True)
        names = ["Explore", "Compare", "Train", "Your model", "Data", "Evaluate", "Learn"]
        if len(links) != len(names) or not all(n in link for n, link in zip(names, links, strict=True)):
            raise CheckFailed(f"the navigation lists {links}, not {names}")
        for path, title in PAGES.items():
            started = time.monotonic()
            page.goto(f"{url}/{path}", wait_until="domcontentloaded")
            page.get_by_role("heading", name=title).first.wait_for(timeout=WAIT_MS)
            page.wait_for_timeout(1000)
            errors = page.locator("[data-testid=stException]").all_inner_texts()
            if errors:
                raise CheckFailed(f"/{path} shows an error: {errors[0][:500]}")
            print(f"/{path}: '{title}' in {time.monotonic() - started:.1f} s, no error", flush=True)
            if shots and path == "evaluate":
                page.screenshot(path=str(shots / "evaluate.png"))
        browser.close()


def stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    print(f"server stopped (exit code {server.returncode})", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shots", type=Path, help="save screenshots (1280x720) of Explore and Evaluate here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (wheel, venv, log)")
    parser.add_argument("--reuse", type=Path, metavar="VENV", help="install into a venv a --keep run left (faster)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="attnviz-wheelcheck-"))
    if tmp.resolve().is_relative_to(ROOT):
        raise SystemExit(f"the temporary folder {tmp} lies inside the checkout; set TMPDIR elsewhere")
    server = None
    try:
        wheel = build_wheel(tmp)
        check_contents(wheel)
        venv = install(tmp, wheel, args.reuse)
        port = free_port()
        server = start_app(tmp, venv, port)
        wait_healthy(server, f"http://127.0.0.1:{port}", venv)
        drive(f"http://127.0.0.1:{port}", args.shots, tmp / "chromium-home")
        stop(server)
        server = None
        print("wheel check: passed", flush=True)
        return 0
    except Exception as e:  # a failed check, or the check itself broken: either way a failure
        print(f"wheel check: FAILED: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        log = tmp / "server.log"
        if log.is_file():
            print("-- server log (last 60 lines)", file=sys.stderr)
            print("\n".join(log.read_text(errors="replace").splitlines()[-60:]), file=sys.stderr)
        return 1
    finally:
        if server is not None:
            stop(server)
        if args.keep:
            print(f"kept {tmp}", flush=True)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
