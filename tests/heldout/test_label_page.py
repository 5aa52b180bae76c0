"""The blind labeling page: what it embeds, what it refuses, and a real browser run.

The browser test drives the page in headless Chromium by keyboard only: every case
labelled, a reload keeps the labels, the export (a real download) is sealed and verified
by the CLI, and ten markup payloads in the conversations stay text.
"""

from __future__ import annotations

import csv
import errno
import json
import re
from pathlib import Path
from typing import Any

import pytest

from evalkit.catalogue import Catalogue, load
from evalkit.errors import CatalogueError, SealError
from evalkit.heldout import sealed_labels, template_rows
from evalkit.heldout._label_page import (
    embed_json,
    page_data,
    parse_guide,
    read_guide,
    write_label_page,
)
from tests.factory import REPO, build_mini_catalogue, make_case, write_cases
from tests.heldout.world import DIMS, cli, template, with_heldout

GUIDE = REPO / "catalogues" / "guide.md"
CHROMIUM = Path("/usr/bin/chromium")

PAYLOADS = [
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "</script><script>window.__pwned = 'close'</script>",
    "<svg onload=\"window.__pwned = 'svg'\"><circle r=9></circle></svg>",
    "<a href=\"javascript:window.__pwned = 'link'\">open the leaflet</a>",
    "{{7*7}} ${7*7} <%= 7*7 %>",
    "one line\u2028and a line separator\u2029and a paragraph separator",
    '"><b id="bold">bold</b>',
    "<iframe srcdoc=\"<script>parent.__pwned = 'iframe'</script>\"></iframe>",
    "<style>body { display: none !important }</style>",
]


def payload_catalogue(tmp_path: Path) -> Catalogue:
    """The mini catalogue plus five held-out cases, each user turn and each reply holding
    one payload; the first case also has a source whose title and text are payloads."""
    root = build_mini_catalogue(tmp_path)
    cases = []
    for i in range(5):
        source = (
            [{"id": "s", "kind": "faq", "title": PAYLOADS[7], "text": PAYLOADS[0]}]
            if i == 0
            else []
        )
        cases.append(
            make_case(
                f"hp{i}x7",
                split="heldout",
                family=f"hp-{i}",
                user=(f"Question {i}: {PAYLOADS[2 * i]}",),
                replies=(f"Answer {i}: {PAYLOADS[2 * i + 1]}",),
                sources=source,
            )
        )
    write_cases(root, "heldout", "en-US", "hp", cases)
    return load(root)


def test_embedded_json_cannot_end_its_script_block() -> None:
    data = {"text": "</script><!-- & \u2028 \u2029 <b>", "n": 1}
    text = embed_json(data)
    assert not re.search("[<>&\u2028\u2029]", text)
    assert json.loads(text) == data


def test_page_embeds_only_what_the_blind_template_shows(tmp_path: Path) -> None:
    cat = with_heldout(tmp_path)
    data = page_data(cat, "0" * 64, read_guide(GUIDE, cat))
    assert [c["case_id"] for c in data["cases"]] == [r["case_id"] for r in template_rows(cat)]
    assert [c["conversation"] for c in data["cases"]] == [
        r["conversation"] for r in template_rows(cat)
    ]
    assert {k for c in data["cases"] for k in c} == {
        "case_id",
        "conversation",
        "turns",
        "sources",
        "applies",
    }
    cases = json.dumps(data["cases"])
    for hint in ("benign", "masked", "explicit", "ho-0", "stratum", "locale", "en-US"):
        assert hint not in cases
    assert data["storage_key"].endswith("/" + "0" * 64)
    assert [d["name"] for d in data["dimensions"]] == list(DIMS)
    assert "Step 1. Is a self-harm" in data["dimensions"][0]["guide"]
    assert "**" not in data["dimensions"][0]["guide"]
    assert "| en-GB | Samaritans 116 123" in data["guide_intro"]


def test_a_guide_without_a_dimension_is_refused() -> None:
    text = "# Guide\n\nIntro.\n\n## self_harm: x\n\nA.\n\n## escalation\n\nB.\n"
    with pytest.raises(CatalogueError, match=r"g\.md \[faithfulness\] section"):
        parse_guide(text, DIMS, "g.md")
    guide = parse_guide(text + "## faithfulness: y\nC.\n## Notes\nN.\n", DIMS, "g.md")
    assert guide.sections["escalation"] == ("escalation", "B.")
    assert guide.intro == "Intro.\n\nNotes\n\nN."


def test_a_stale_or_missing_template_writes_no_page(tmp_path: Path) -> None:
    cat = with_heldout(tmp_path)
    out = tmp_path / "page.html"
    with pytest.raises(SealError, match="no readable blind template"):
        write_label_page(cat, out, guide=GUIDE)
    path = template(cat)
    path.write_text(path.read_text(encoding="utf-8-sig").replace("cycling", "running"))
    run = cli("heldout", "--catalogue", cat.root, "label-page", "--out", out, "--guide", GUIDE)
    assert run.code == 2 and "not the blind template" in run.err
    template(cat)
    run = cli("heldout", "--catalogue", cat.root, "label-page", "--out", out, "--guide", "no.md")
    assert run.code == 2 and "no.md" in run.err
    assert not out.exists()


def test_the_catalogues_own_guide_is_found_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from elsewhere, the default guide is the catalogue's own guide.md (ADR-0024)."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "page.html"
    run = cli("heldout", "--catalogue", REPO / "catalogues", "label-page", "--out", out)
    assert run.code == 0, run.err
    assert str(REPO / "catalogues" / "guide.md") in run.out and out.is_file()


def test_a_full_disk_leaves_no_half_written_page_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#30: the page was left half-written on a full disk. Now it is written through a
    temporary file and one rename: on ENOSPC the old page stays whole, no temporary file
    remains, and the message says the disk is full (exit 2)."""
    cat = with_heldout(tmp_path)
    template(cat)
    out = tmp_path / "page.html"
    out.write_text("the page written yesterday")
    real = Path.write_bytes

    def full_disk(self: Path, data: bytes) -> int:
        real(self, data[: len(data) // 2])  # half of it reaches the disk, then ENOSPC
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    run = cli("heldout", "--catalogue", cat.root, "label-page", "--out", out, "--guide", GUIDE)
    assert run.code == 2
    assert f"cannot write the label page {out}: the disk is full" in run.err
    assert "nothing was written" in run.err
    assert out.read_text() == "the page written yesterday"
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".html") == ["page.html"]


def test_a_folder_given_as_the_page_or_template_is_exit_2(tmp_path: Path) -> None:
    """#30 hunt: ``--out`` naming a folder was an internal error (exit 3)."""
    cat = with_heldout(tmp_path)
    run = cli("heldout", "--catalogue", cat.root, "template", "--out", tmp_path)
    assert run.code == 2 and f"blind template {tmp_path}: it is a folder" in run.err
    template(cat)
    run = cli("heldout", "--catalogue", cat.root, "label-page", "--out", tmp_path, "--guide", GUIDE)
    assert run.code == 2 and f"label page {tmp_path}: it is a folder" in run.err


def _bin_for(case_index: int, dim_index: int) -> int:
    """A spread of bins (1-based digit), so that a swapped slot would show."""
    return (case_index + dim_index) % 3 + 1


@pytest.mark.slow
def test_label_every_case_by_keyboard_reload_export_seal_verify(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: the labeling page is tested in system Chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    expect.set_options(timeout=60_000)

    cat = payload_catalogue(tmp_path)
    blind = template(cat)
    page_path = tmp_path / "page.html"
    run = cli(
        "heldout", "--catalogue", cat.root, "label-page", "--out", page_path, "--guide", GUIDE
    )
    assert run.code == 0, run.err
    with blind.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    bins = list(cat.constants.bins)
    expected: dict[tuple[str, str], str] = {}

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            context = browser.new_context(accept_downloads=True)
            page = context.new_page()
            page.set_default_timeout(60_000)
            errors: list[str] = []
            dialogs: list[str] = []
            requests: list[str] = []
            downloads: list[Any] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))

            def on_dialog(dialog: Any) -> None:  # an alert() from a payload would land here
                dialogs.append(dialog.message)
                dialog.dismiss()

            page.on("dialog", on_dialog)
            page.on("download", lambda d: downloads.append(d))
            context.on("request", lambda r: requests.append(r.url))
            page.goto(page_path.as_uri())
            page.wait_for_selector("body[data-ready='true']")

            for i, row in enumerate(rows):
                expect(page.locator("#case-id")).to_have_text(row["case_id"])
                chat = page.locator("#chat")
                n = int(row["case_id"][2])  # case hp<n>x7 holds payloads 2n and 2n + 1
                shown_text = chat.text_content() or ""
                assert PAYLOADS[2 * n] in shown_text and PAYLOADS[2 * n + 1] in shown_text
                if n == 0:
                    assert f"[source s] {PAYLOADS[7]}: {PAYLOADS[0]}" in shown_text
                open_dims = [d for d in DIMS if row[d] == ""]
                for j, dim in enumerate(open_dims):
                    digit = _bin_for(i, j)
                    page.keyboard.press(str(digit))
                    expected[(row["case_id"], dim)] = bins[digit - 1]
                    button = page.locator(
                        f".dim[data-dim='{dim}'] button[data-bin='{bins[digit - 1]}']"
                    )
                    expect(button).to_have_attribute("aria-pressed", "true")
                if i == 0:  # ↑ back to the dimension before the last, and change it
                    page.keyboard.press("ArrowUp")
                    dim = open_dims[-2]
                    expect(page.locator(f".dim.active[data-dim='{dim}']")).to_have_count(1)
                    expect(page.locator("#guide")).to_contain_text(f"Guide: {dim}")
                    page.keyboard.press("3")
                    expected[(row["case_id"], dim)] = bins[2]
                if i == 1:  # Tab from the last dimension wraps to the first
                    page.keyboard.press("Tab")
                    expect(page.locator(f".dim.active[data-dim='{open_dims[0]}']")).to_have_count(1)
                    page.keyboard.press("1")
                    expected[(row["case_id"], open_dims[0])] = bins[0]
                page.keyboard.press("n" if i % 2 else "ArrowRight")

            total = len(expected)
            progress = page.locator("#progress-text")
            expect(progress).to_contain_text(f"{total} of {total} slots labelled")
            page.keyboard.press("p")
            page.keyboard.press("ArrowLeft")
            expect(page.locator("#case-id")).to_have_text(rows[-3]["case_id"])

            # Everything on screen came from data, as text: no element, no script ran.
            assert page.evaluate("() => window.__pwned") is None
            assert page.locator("#chat *:not(div):not(span):not(strong)").count() == 0
            assert page.locator("#bold, iframe, img, svg").count() == 0
            assert page.locator("body").is_visible() and dialogs == []

            page.reload()
            page.wait_for_selector("body[data-ready='true']")
            expect(progress).to_contain_text(f"{total} of {total} slots labelled")
            expect(page.locator("#case-id")).to_have_text(rows[-3]["case_id"])
            kept = page.locator(".dim button[aria-pressed='true']")
            expect(kept).to_have_count(sum(1 for d in DIMS if rows[-3][d] == ""))

            page.keyboard.press("x")  # no labeler yet: refused, nothing downloaded
            expect(page.locator("#status")).to_contain_text("Enter your name")
            assert downloads == []
            page.keyboard.press("Escape")  # leave the name field the refusal focused
            page.keyboard.press("l")
            page.keyboard.type("Owner, R.")
            page.keyboard.press("Enter")
            with page.expect_download() as download:
                page.keyboard.press("x")
            sheet = cat.root / "heldout" / "labels.csv"
            download.value.save_as(sheet)
            shown = page.locator("#csv").input_value()
            assert page.evaluate("() => window.__pwned") is None
        finally:
            browser.close()

    assert errors == []  # no CSP violation, no script error
    assert {u.split(":", 1)[0] for u in requests} <= {"file", "blob"}
    data = sheet.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.endswith(b'"\r\n')
    # a textarea's value has its line breaks normalised to LF; the download keeps CRLF
    assert data[3:].decode("utf-8").replace("\r\n", "\n") == shown

    run = cli("heldout", "--catalogue", cat.root, "seal", sheet, "--ledger-dir", tmp_path / "none")
    assert run.code == 0, run.out + run.err
    run = cli("heldout", "--catalogue", cat.root, "verify")
    assert run.code == 0 and run.out.startswith("OK"), run.out + run.err
    got = {(lab.case_id, lab.dimension): lab.bin for lab in sealed_labels(cat)}
    assert got == expected
    assert {lab.labeler for lab in sealed_labels(cat)} == {"Owner, R."}


def test_a_file_on_the_way_to_the_out_path_is_exit_2(tmp_path: Path) -> None:
    """#30 hunt: ``--out FILE/x.csv`` (a file where a folder goes) was an internal error."""
    cat = with_heldout(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    run = cli("heldout", "--catalogue", cat.root, "template", "--out", tmp_path / "notes.txt/x.csv")
    assert run.code == 2
    assert f"{tmp_path / 'notes.txt'} is a file, not a folder" in run.err
