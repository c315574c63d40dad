"""`atomicchat generate`: the JSON contract, streaming, and one-line errors with no traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "atomicchat", *args], capture_output=True, text=True, timeout=120)


def test_json_contract_and_equality(llama_pair):
    base = cli("generate", "--model", str(llama_pair.target), "--prompt-tokens", "1,2,3", "--max-tokens", "24", "--json")
    assert base.returncode == 0, base.stderr
    a = json.loads(base.stdout)
    spec = cli(
        "generate", "--model", str(llama_pair.target), "--draft", str(llama_pair.draft),
        "--draft-max", "7", "--prompt-tokens", "1,2,3", "--max-tokens", "24", "--json",
    )
    assert spec.returncode == 0, spec.stderr
    b = json.loads(spec.stdout)
    for key in ("tokens", "text", "n_generated", "n_drafted", "n_accepted", "n_steps", "acceptance", "tokens_per_second"):
        assert key in b
    assert a["tokens"] == b["tokens"] and len(a["tokens"]) == 24
    assert a["n_drafted"] == 0 and b["n_drafted"] > 0
    assert b["n_generated"] == b["n_accepted"] + b["n_steps"]


def test_streaming_prints_text_and_stats(llama_pair):
    r = cli("generate", "--model", str(llama_pair.target), "--prompt", "hello", "--raw", "--max-tokens", "5")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip()
    assert "tok/s" in r.stderr and "5 tokens" in r.stderr


def test_chat_prompt_with_gemma(gemma_path):
    r = cli("generate", "--model", str(gemma_path), "--prompt", "Say hello.", "--max-tokens", "8", "--json", "--ctx", "256")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n_generated"] > 0


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--model", "/nonexistent/x.gguf", "--prompt", "hi"], "not found"),
        (["--model", "{t}", "--draft", "{t}", "--prompt", "hi"], "not a DFlash draft"),
        (["--model", "{t}", "--prompt", "hi", "--max-tokens", "0"], "--max-tokens"),
        (["--model", "{t}", "--prompt-tokens", "1,x"], "comma-separated"),
        (["--model", "{t}", "--prompt", "hi", "--draft-max", "3"], "needs --draft"),
        (["--model", "{t}"], "required"),
        (["--model", "{t}", "--prompt", "x", "--temperature", "-1"], "negative"),
    ],
)
def test_bad_input_one_line_no_traceback(llama_pair, args, needle):
    r = cli("generate", *[a.replace("{t}", str(llama_pair.target)) for a in args])
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert needle in lines[0]
    assert "Traceback" not in r.stderr


def test_not_gguf_file(tmp_path):
    bad = tmp_path / "notes.gguf"
    bad.write_text("hello")
    r = cli("generate", "--model", str(bad), "--prompt", "hi")
    assert r.returncode == 1
    assert "not a GGUF" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--temperature", "nan"], "error: --temperature must be a number from 0 to 100, not nan"),
        (["--temperature", "inf"], "error: --temperature must be a number from 0 to 100, not inf"),
        (["--top-p", "1.5"], "error: --top-p must be a number from 0 to 1, not 1.5"),
    ],
)
def test_bad_sampling_numbers_are_one_line(llama_pair, flags, expected):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "atomicchat", "generate", "--model", str(llama_pair.target),
                        "--prompt", "hi", *flags], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.strip() == expected


def test_invalid_utf8_prompt_is_one_line(llama_pair):
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable.encode(), b"-m", b"atomicchat", b"generate", b"--model",
                        str(llama_pair.target).encode(), b"--prompt", b"bad \xff\xfe bytes"],
                       capture_output=True, timeout=60, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 2 and b"--prompt is not valid UTF-8" in r.stderr and b"Traceback" not in r.stderr
