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
        "--draft-max", "7", "--draft-p-min", "0", "--prompt-tokens", "1,2,3", "--max-tokens", "24", "--json",
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


def test_chat_prompt_with_smollm2(smollm2_path):
    r = cli("generate", "--model", str(smollm2_path), "--prompt", "Say hello.", "--max-tokens", "8", "--json", "--ctx", "256")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n_generated"] > 0


def test_a_file_attached_as_the_app_attaches_it(smollm2_path, tmp_path):
    """--file puts the file after the prompt as the chat does: the same tokens as that message."""
    from atomicchat.attachments import Attachment, compose
    from atomicchat.engine import Engine, EngineConfig

    code = tmp_path / "count.py"
    code.write_text("def count_lines(path):\n    with open(path) as f:\n        return sum(1 for _ in f)\n")
    r = cli("generate", "--model", str(smollm2_path), "--prompt", "What does this do?", "--file", str(code),
            "--max-tokens", "24", "--json", "--ctx", "512")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    with Engine(EngineConfig(smollm2_path, None, n_ctx=512, n_threads=1)) as eng:
        message = compose("What does this do?", [Attachment("count.py", code.read_text().rstrip("\n"))])
        assert out["n_prompt"] == len(eng.chat_prompt([{"role": "user", "content": message}]))
    assert "lines" in out["text"], out["text"]  # greedy SmolLM2: "This function counts the number of lines…"


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--model", "/nonexistent/x.gguf", "--prompt", "hi"], "not found"),
        (["--model", "{t}", "--draft", "{t}", "--prompt", "hi"], "not a DFlash draft"),
        (["--model", "{t}", "--prompt", "hi", "--max-tokens", "0"], "--max-tokens"),
        (["--model", "{t}", "--prompt-tokens", "1,x"], "comma-separated"),
        (["--model", "{t}", "--prompt", "hi", "--draft-max", "3"], "needs --draft"),
        (["--model", "{t}", "--prompt", "hi", "--draft-p-min", "1"], "--draft-p-min"),
        (["--model", "{t}", "--prompt", "hi", "--draft-p-min", "-0.5"], "--draft-p-min"),
        (["--model", "{t}"], "required"),
        (["--model", "{t}", "--prompt", "x", "--temperature", "-1"], "negative"),
        (["--model", "{t}", "--prompt", "x", "--temperature", "nan"], "finite"),
        (["--model", "{t}", "--prompt", "x", "--temperature", "inf"], "finite"),
        (["--model", "{t}", "--prompt", "x", "--top-p", "1.5"], "between 0 and 1"),
        (["--model", "{t}", "--prompt", "x", "--min-p=-inf"], "finite"),
        (["--model", "{t}", "--prompt", "x", "--file", "/nonexistent/notes.txt"], "notes.txt could not be read"),
        (["--model", "{t}", "--prompt", "x", "--raw", "--file", "/etc/hostname"], "--file goes with --prompt"),
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


def test_invalid_utf8_prompt_and_system_are_one_line_errors(llama_pair):
    for flag in (b"--prompt", b"--system"):
        args = [sys.executable.encode(), b"-m", b"atomicchat", b"generate", b"--model", str(llama_pair.target).encode()]
        args += [flag, b"caf\xe9 \xff\xfe"] + ([b"--prompt", b"hi"] if flag == b"--system" else [])
        r = subprocess.run(args, capture_output=True, timeout=120)
        err = r.stderr.decode("utf-8", "replace")
        assert r.returncode != 0 and "Traceback" not in err
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and "not valid UTF-8" in lines[0], err


def test_gen_params_refuse_non_finite_values():
    from atomicchat.engine import EngineError, GenParams

    for kw in ({"temperature": float("nan")}, {"temperature": float("inf")}, {"top_p": 2.0}, {"min_p": float("nan")}):
        with pytest.raises(EngineError):
            GenParams(**kw)
    assert GenParams(temperature=0.7, top_p=1.0, min_p=0.0).temperature == 0.7
