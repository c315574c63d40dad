"""Hub search against the loopback fake Hub: repos, quants (split files, mmproj), gated and missing
repos, a fit from a remote header read with Range requests, pairing checks on remote headers, a
download of a searched quant, and offline browsing from the cache."""

from __future__ import annotations

import pytest

from atomicchat.models import hub_search
from atomicchat.models.drafts import draft_offer, known_draft, quant_advice
from atomicchat.models.errors import GatedError, NotFoundError, OfflineError
from atomicchat.models.hardware import GpuInfo, Hardware
from tests.models.conftest import DRAFT_FILE, DRAFT_REPO, TARGET_FILE, TARGET_REPO
from tests.models.ggufs import OTHER_TOKENS, make_draft, make_target

HW = Hardware(16 << 30, 12 << 30, 100 << 30, "/", GpuInfo(False, "CPU only", ()))


def test_parse_query() -> None:
    p = hub_search.parse_query
    assert p("qwen3.5") == hub_search.Query(text="qwen3.5")
    assert p(" unsloth/Qwen3.5-9B-GGUF ") == hub_search.Query(repo="unsloth/Qwen3.5-9B-GGUF")
    assert p("https://huggingface.co/unsloth/Qwen3.5-9B-GGUF/blob/main/Qwen3.5-9B-Q4_K_M.gguf").repo == \
        "unsloth/Qwen3.5-9B-GGUF"
    assert p("https://hf.co/bartowski/x-GGUF").repo == "bartowski/x-GGUF"
    assert p("https://huggingface.co/datasets/a/b").text  # not a model repo
    assert p("") == hub_search.Query()


def test_group_files_splits_mmproj_and_drafts() -> None:
    rows = [
        ("Big-Q8_0-00002-of-00002.gguf", 200, "b"), ("Big-Q8_0-00001-of-00002.gguf", 100, "a"),
        ("Big-Q4_K_M.gguf", 150, "c"), ("mmproj-BF16.gguf", 10, "d"), ("README.md", 1, None),
        ("Broken-Q2_K-00001-of-00003.gguf", 5, None),  # parts 2 and 3 missing: not offered
        ("Big-DFlash.Q8_0.gguf", 20, "e"),
    ]
    quants, mmproj, drafts = hub_search.group_files(rows)
    assert [(q.quant, q.size, q.split) for q in quants] == [("Q4_K_M", 150, False), ("Q8_0", 300, True)]
    assert quants[1].files == ("Big-Q8_0-00001-of-00002.gguf", "Big-Q8_0-00002-of-00002.gguf")
    assert mmproj == ["mmproj-BF16.gguf"] and [d.quant for d in drafts] == ["Q8_0"]


@pytest.fixture
def hubmodels(served, tmp_path):  # noqa: ANN001, ANN201
    hub = served.hub
    hub.repo(TARGET_REPO).downloads, hub.repo(TARGET_REPO).license = 500, "apache-2.0"
    hub.add_bytes(TARGET_REPO, "mmproj-F16.gguf", b"GGUF-not-a-chat-model")
    hub.add_bytes(TARGET_REPO, "Tiny-Q8_0-00001-of-00002.gguf", served.target)
    hub.add_bytes(TARGET_REPO, "Tiny-Q8_0-00002-of-00002.gguf", b"x" * 1000)
    other = make_target(tmp_path / "Other.gguf", pad_bytes=1 << 10)
    hub.add_bytes("else/Tiny-Chat-GGUF", "Tiny-Chat-F16.gguf", other)
    hub.repo("else/Tiny-Chat-GGUF").downloads = 900
    hub.add_bytes("else/Tiny-Notes", "notes.txt", b"no gguf here")
    hub.add_bytes("locked/Tiny-Gated-GGUF", "g.gguf", other)
    hub.repo("locked/Tiny-Gated-GGUF", gated=True)
    return served


def test_search_lists_gguf_repos_by_downloads_with_licence_and_gated(hubmodels) -> None:  # noqa: ANN001
    r = hub_search.search("tiny")
    ids = [h.repo_id for h in r.hits]
    assert ids[:2] == ["else/Tiny-Chat-GGUF", TARGET_REPO] and "else/Tiny-Notes" not in ids
    hit = next(h for h in r.hits if h.repo_id == TARGET_REPO)
    assert hit.license == "apache-2.0" and hit.downloads == 500 and hit.quants is None
    assert next(h for h in r.hits if h.repo_id == "locked/Tiny-Gated-GGUF").gated
    assert not r.offline and r.note == ""
    sent = [x for x in hubmodels.hub.log if x.path == "/api/models"]
    assert sent, "the search went to the Hub's /api/models endpoint"


def test_repo_id_or_url_gives_quants_with_sizes(hubmodels) -> None:  # noqa: ANN001
    url = f"https://huggingface.co/{TARGET_REPO}/tree/main"
    for q in (TARGET_REPO, url):
        (hit,) = hub_search.search(q).hits
        assert hit.repo_id == TARGET_REPO
        names = {x.quant: x for x in hit.quants}
        assert set(names) == {"Q4_K_M", "Q8_0"} and names["Q8_0"].split
        assert names["Q8_0"].size == len(hubmodels.target) + 1000
        assert names["Q4_K_M"].size == len(hubmodels.target)
        assert names["Q4_K_M"].sha256 == (hubmodels.hub.file(TARGET_REPO, TARGET_FILE).sha256,)
        assert hit.mmproj == ("mmproj-F16.gguf",)


def test_missing_and_gated_repos_are_sentences(hubmodels) -> None:  # noqa: ANN001
    with pytest.raises(NotFoundError, match="was not found on the Hub"):
        hub_search.search("nobody/Nothing-GGUF")
    with pytest.raises(GatedError, match="gated repository"):
        hub_search.search("locked/Tiny-Gated-GGUF")


def test_fit_from_remote_header_uses_range_reads_only(hubmodels) -> None:  # noqa: ANN001
    (hit,) = hub_search.search(TARGET_REPO).hits
    q4 = next(q for q in hit.quants if q.quant == "Q4_K_M")
    est = hub_search.fit_for(TARGET_REPO, q4, n_ctx=2048, hardware=HW,
                             draft=(DRAFT_REPO, DRAFT_FILE, len(hubmodels.draft)))
    assert est.weights_target == len(hubmodels.target) and est.weights_draft == len(hubmodels.draft)
    assert est.kv_target > 0 and est.n_ctx == 2048 and est.verdict.value == "fits_ram"
    gets = hubmodels.hub.gets(TARGET_FILE)
    assert gets and all(g.range == "bytes=0-4194303" for g in gets)  # the header, never the whole file


def test_pairing_checks_read_remote_headers(hubmodels, tmp_path) -> None:  # noqa: ANN001
    assert hub_search.pair_reason((TARGET_REPO, TARGET_FILE), (DRAFT_REPO, DRAFT_FILE)) is None
    bad = make_draft(tmp_path / "bad.gguf", tokens=OTHER_TOKENS)
    hubmodels.hub.add_bytes(DRAFT_REPO, "Other-DFlash.gguf", bad)
    reason = hub_search.pair_reason((TARGET_REPO, TARGET_FILE), (DRAFT_REPO, "Other-DFlash.gguf"))
    assert reason and "vocabular" in reason.lower()


def test_searched_quant_downloads_and_is_registered(hubmodels) -> None:  # noqa: ANN001
    from atomicchat.models.downloads import DownloadJob
    from atomicchat.models.registry import Registry

    (hit,) = hub_search.search(TARGET_REPO).hits
    q4 = next(q for q in hit.quants if q.quant == "Q4_K_M")
    (ref,) = hub_search.file_refs(TARGET_REPO, q4)
    assert ref.sha256 == hubmodels.hub.file(TARGET_REPO, TARGET_FILE).sha256 and ref.size_exact
    result = DownloadJob(files=[ref]).run()
    assert result.target_path.read_bytes() == hubmodels.target
    q8 = next(q for q in hit.quants if q.quant == "Q8_0")
    assert [r.filename for r in hub_search.file_refs(TARGET_REPO, q8)] == list(q8.files)
    assert any(f.filename == TARGET_FILE for f in Registry().files())


def test_offline_search_uses_the_cache_and_says_so(hubmodels, monkeypatch) -> None:  # noqa: ANN001
    first = hub_search.search("tiny")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    again = hub_search.search("tiny")
    assert again.offline and "Offline mode is on" in again.note and "saved" in again.note
    assert [h.repo_id for h in again.hits] == [h.repo_id for h in first.hits]
    with pytest.raises(OfflineError, match="No earlier results"):
        hub_search.search("never searched")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: unreachable is like offline
    cut = hub_search.search("tiny")
    assert cut.offline and "cannot be reached" in cut.note


def test_known_drafts_and_offers() -> None:
    assert known_draft("unsloth/Qwen3.5-9B-GGUF").target == "Qwen3.5-9B"
    assert known_draft("Qwen_Qwen3.5-9B-Q4_K_M.gguf").target == "Qwen3.5-9B"
    assert known_draft("unsloth/Qwen3.5-4B-GGUF").target == "Qwen3.5-4B"
    assert known_draft("Qwen3.5-9B-DFlash.Q8_0.gguf") is None  # a draft is not a target
    assert known_draft("someone/Qwen3.5-90B-GGUF") is None
    assert known_draft("TheBloke/Mistral-7B-GGUF") is None
    offer = draft_offer("bartowski/Qwen_Qwen3.5-9B-GGUF")
    assert offer.file is not None and offer.file.repo == "AtomicChat/Qwen3.5-9B-DFlash-GGUF"
    assert "With DFlash draft" in offer.text
    # a speedup nobody measured here is said as reported, with where; the app's own figure comes after download
    assert "Reported for Qwen3.5-9B on a GPU (AMD RX 9070 XT): 2.1-2.7×" in offer.text and "about" not in offer.text
    assert offer.text.endswith("This app measures the gain on yours after download.") and "  " not in offer.text
    assert "only as safetensors" in draft_offer("unsloth/Qwen3.5-4B-GGUF").text
    assert "forks" in draft_offer("unsloth/Qwen3.5-27B-GGUF").text
    assert "No DFlash draft is known" in draft_offer("TheBloke/Mistral-7B-GGUF").text
    assert "+67%" in quant_advice("BF16", True) and "+39%" in quant_advice("Q8_0", True)
    assert "+12%" in quant_advice("Q6_K", True) and "little" in quant_advice("Q4_K_M", True)
    assert quant_advice("Q4_K_M", False) == ""


def _cli(*args: str) -> tuple[int, str, str]:
    import contextlib
    import io

    from atomicchat.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["models", "search", *args])
    return code, out.getvalue(), err.getvalue()


def test_cli_search_repo_and_errors(hubmodels, monkeypatch) -> None:  # noqa: ANN001
    code, out, _ = _cli("tiny")
    assert code == 0 and "else/Tiny-Chat-GGUF" in out and "500 downloads" in out
    code, out, _ = _cli(TARGET_REPO, "--ctx", "2048")
    assert code == 0 and "Q4_K_M" in out and "(2 parts)" in out and "mmproj-F16.gguf" in out
    assert "Fits in RAM" in out or "Won't fit" in out or "Fits in VRAM" in out  # a real fit from the header
    assert "No DFlash draft is known" in out
    code, _, err = _cli("nobody/Nothing-GGUF")
    assert code == 1 and err.startswith("error: The repository nobody/Nothing-GGUF was not found")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, out, err = _cli("tiny")
    assert code == 0 and "Showing results saved" in err and "else/Tiny-Chat-GGUF" in out
