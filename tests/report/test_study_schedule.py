"""``evalkit study`` runs studies a few at a time: start and end lines, a progress line,
outputs in the order of STUDIES whatever order the studies finish in, ADR links to pages
rendered elsewhere (``--adr-base``). Fake work and a fake notebook execution: no kernel."""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

import evalkit.report._run as run_module
from evalkit._memo import CACHE_VARIABLE
from evalkit.cli import main
from evalkit.report._execute import Execution
from evalkit.report._schedule import WIDTH, Reporter, run_jobs
from tests.report.world import build_world

REPO = Path(__file__).resolve().parents[2]


# ---- the scheduler, with fake work ------------------------------------------------------


def test_results_come_in_the_order_given_whatever_order_jobs_finish() -> None:
    lines: list[str] = []
    second_done = threading.Event()

    def first() -> str:
        assert second_done.wait(5), "the two jobs did not run at the same time"
        return "first"

    def second() -> str:
        second_done.set()
        return "second"

    out = run_jobs([("a", first), ("b", second)], workers=2, reporter=Reporter(lines.append))
    assert out == ["first", "second"]
    assert sorted(lines) == ["a: started", "b: started"]


def test_no_more_jobs_run_at_a_time_than_workers() -> None:
    running, most = 0, 0
    guard = threading.Lock()
    pair = threading.Barrier(2, timeout=60)  # two jobs meet: they did run at the same time

    def job() -> None:
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
        pair.wait()
        time.sleep(0.01)
        with guard:
            running -= 1

    run_jobs([(f"j{i}", job) for i in range(6)], workers=2, reporter=Reporter(lambda _: None))
    assert most == 2


def test_a_job_that_raises_stops_the_jobs_not_started_and_is_raised() -> None:
    ran: list[str] = []

    def boom() -> None:
        raise RuntimeError("kernel died")

    def later() -> None:
        ran.append("later")

    with pytest.raises(RuntimeError, match="kernel died"):
        run_jobs([("boom", boom), ("later", later)], workers=1, reporter=Reporter(lambda _: None))
    assert ran == []


def test_progress_names_the_running_jobs_while_a_long_one_runs() -> None:
    lines: list[str] = []
    release = threading.Event()
    reporter = Reporter(lines.append, every=0.0)  # a log: a progress line after no silence
    worker = threading.Thread(
        target=run_jobs,
        args=([("slow_study", lambda: release.wait(60))],),
        kwargs={"workers": 1, "reporter": reporter, "tick": 0.01},
    )
    worker.start()
    deadline = time.monotonic() + 60  # generous: a loaded machine must not fail it
    while not any("running: slow_study" in line for line in lines):
        assert time.monotonic() < deadline, lines
        time.sleep(0.01)
    release.set()
    worker.join()
    shown = next(line for line in lines if "running:" in line)
    assert "0 of 1 done; running: slow_study" in shown


def test_a_log_gets_a_progress_line_only_after_silence() -> None:
    now = [0.0]
    lines: list[str] = []
    reporter = Reporter(lines.append, every=5.0, clock=lambda: now[0])
    reporter.line("calibration_study: started")
    now[0] = 4.0
    reporter.progress("  … 0 of 2 done; running: calibration_study 4 s")
    assert lines == ["calibration_study: started"]
    now[0] = 5.5
    reporter.progress("  … 0 of 2 done; running: calibration_study 5 s")
    assert lines[-1].endswith("calibration_study 5 s")


def test_a_terminal_gets_one_progress_line_rewritten_in_place_within_100_columns() -> None:
    stream = io.StringIO()
    reporter = Reporter(stream=stream, tty=True)
    reporter.progress("x" * 300)
    reporter.progress("short")
    reporter.line("calibration_study: rendered in 1.0 s -> reports/calibration_study.html")
    text = stream.getvalue()
    assert text.count("\n") == 1  # the progress line never becomes a line of its own
    for shown in text.replace("\x1b[K", "").split("\r"):
        assert len(shown.rstrip("\n")) < WIDTH
    assert text.endswith("\r\x1b[Kcalibration_study: rendered in 1.0 s -> "
                         "reports/calibration_study.html\n")  # fmt: skip


# ---- run_studies, with a fake notebook execution ----------------------------------------


def _fake_execution(
    order: list[str], *, calibration_last: bool = False, envs: list[Any] | None = None
) -> Any:
    """An ``execute_study`` stand-in: an executed notebook showing the study's name and
    the ``adr_base`` it was given. With ``calibration_last`` the calibration study ends
    only after the held-out study has (the reverse of the order of STUDIES)."""
    heldout_done = threading.Event()

    def execute(source: Path, work: Path, params: dict[str, Any], **kw: Any) -> Execution:
        name = source.stem
        if envs is not None:
            envs.append(kw.get("env"))
        if calibration_last and name == "calibration_study":
            assert heldout_done.wait(5), "the two studies did not run at the same time"
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell("x", id=name.replace("_", "-"))
        html = f"<p>{name} adr_base={params['adr_base']}</p>"
        cell.outputs = [nbformat.v4.new_output("display_data", {"text/html": html})]
        nb.cells = [cell]
        order.append(name)
        if name == "heldout_revalidation":
            heldout_done.set()
        return Execution(nb, work / f"{name}.ipynb", 0.01, None)

    return execute


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    build_world(tmp_path / "catalogues")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(world: Path, out: str, jobs: int, **kw: Any) -> list[str]:
    lines: list[str] = []
    run_module.run_studies(
        catalogue="catalogues", out=out, ledger_dir="led", notebooks=REPO / "notebooks",
        adr_dir=kw.pop("adr_dir", REPO / "docs" / "adr"), jobs=jobs, log=lines.append,
        studies=["calibration_study", "heldout_revalidation"], **kw,
    )  # fmt: skip
    return lines


def test_outputs_do_not_depend_on_which_study_finished_first(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    monkeypatch.setattr(run_module, "execute_study", _fake_execution(order))
    _run(world, "one", jobs=1, adr_dir=world / "no-adrs")  # one at a time: in the order of STUDIES
    assert order == ["calibration_study", "heldout_revalidation"]
    order.clear()
    monkeypatch.setattr(run_module, "execute_study", _fake_execution(order, calibration_last=True))
    lines = _run(world, "two", jobs=2, adr_dir=world / "no-adrs")
    assert order == ["heldout_revalidation", "calibration_study"]  # finished the other way
    assert lines[0] == "evalkit study: 2 studies, 2 at a time -> two"
    assert {"calibration_study: started", "heldout_revalidation: started"} <= set(lines)
    ends = {line.split(":")[0] for line in lines if " rendered in " in line}
    assert ends == {"heldout_revalidation", "calibration_study"}
    for name in ("index.html", "run.json", "calibration_study.html", "heldout_revalidation.html"):
        assert (world / "one" / name).read_bytes() == (world / "two" / name).read_bytes(), name
    assert all(len(line) <= WIDTH for line in lines)


def test_heavier_studies_start_first_and_the_index_keeps_the_order_of_studies(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    monkeypatch.setattr(run_module, "execute_study", _fake_execution(order))
    lines: list[str] = []
    summary = run_module.run_studies(
        catalogue="catalogues", out="out", ledger_dir="led", notebooks=REPO / "notebooks",
        adr_dir=world / "no-adrs", jobs=1, log=lines.append,
        studies=["heldout_revalidation", "onset_turns"],
    )  # fmt: skip
    assert order == ["onset_turns", "heldout_revalidation"]  # onset weighs more
    assert [r.study.name for r in summary.results] == ["heldout_revalidation", "onset_turns"]
    index = (world / "out" / "index.html").read_text(encoding="utf-8")
    assert index.index("heldout_revalidation.html") < index.index("onset_turns.html")


def test_adr_base_links_the_adr_pages_instead_of_rendering_them(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_module, "execute_study", _fake_execution([]))
    _run(world, "reports/llm-reader", jobs=2, adr_base="../adr/")
    out = world / "reports" / "llm-reader"
    assert not (out / "adr").exists()
    page = (out / "calibration_study.html").read_text(encoding="utf-8")
    assert "calibration_study adr_base=../adr/" in page  # what the notebook was given
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="../adr/0008-sealed-heldout-revalidation.html"' in index
    assert 'href="adr/' not in index


def test_kernels_get_the_cache_folder_and_a_share_of_the_cores(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    envs: list[Any] = []
    monkeypatch.setattr(run_module, "execute_study", _fake_execution([], envs=envs))
    monkeypatch.setattr(run_module, "cores_available", lambda: 4)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")  # the user's choice stands
    _run(world, "out", jobs=2, adr_dir=world / "no-adrs", cache_dir="cache")
    assert len(envs) == 2
    for env in envs:
        assert env[CACHE_VARIABLE] == str(world / "cache")
        assert env["OMP_NUM_THREADS"] == "2"
        assert "OPENBLAS_NUM_THREADS" not in env


@pytest.mark.parametrize("base", ["/abs/adr/", "../adr", "https://x.org/adr/", '../a"dr/'])
def test_an_adr_base_that_is_not_a_relative_folder_link_is_refused(world: Path, base: str) -> None:
    code = main(["study", "--out", "out", "--only", "heldout_revalidation", "--adr-base", base])
    assert code == 2
    assert not (world / "out").exists()


def test_jobs_below_one_exits_2(world: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["study", "--out", "out", "--jobs", "0"])
    assert exc.value.code == 2


def test_a_study_kernel_started_from_inside_lab_renders_for_a_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`!evalkit study` in a Lab cell inherits Jupyter's session variable; the study
    kernels must not, or the pages would link Lab's markdown instead of the ADR pages."""
    import asyncio

    from jupyter_client.manager import AsyncKernelManager

    from evalkit.report._execute import _kernel_manager
    from evalkit.report._links import SESSION_ENV

    seen: dict[str, Any] = {}

    async def launch(self: Any, kernel_cmd: list[str], **kw: Any) -> None:
        seen.update(kw)

    monkeypatch.setenv(SESSION_ENV, "workspace/calibration_study.ipynb")
    monkeypatch.setattr(AsyncKernelManager, "_async_launch_kernel", launch)
    manager = _kernel_manager(None, {"OMP_NUM_THREADS": "1"})()
    asyncio.run(manager._async_launch_kernel(["python"]))
    assert SESSION_ENV not in seen["env"] and seen["env"]["OMP_NUM_THREADS"] == "1"
    assert seen["env"]["PATH"] == os.environ["PATH"]
