"""Corpus, chat samples and tokenizer for the demo pair (offline, licence-clean).

Text: the Python standard library's own `.py` sources of the interpreter running this script
(`sysconfig.get_paths()["stdlib"]`, PSF License), without test suites and site-packages.
Every top-level function, class and method is turned into one ChatML conversation:

    <|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n        (half of the samples)
    <|im_start|>user\\n{request naming the object, or its docstring's first line}<|im_end|>\\n
    <|im_start|>assistant\\nHere is `name` from `module`:\\n```python\\n{source}\\n```<|im_end|>\\n

so the tiny target learns to answer a chat turn with Python code and to stop with <|im_end|>.
The tokenizer is a byte-level BPE (GPT-2 pre-tokenizer regex, which llama.cpp runs as pre "gpt-2")
trained with the `tokenizers` package on the same text. Special tokens get ids 0..3.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sysconfig
import textwrap
from pathlib import Path

import numpy as np

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|mask|>"]
EOT, IM_START, IM_END, MASK = range(4)
SYSTEM = "You are a helpful assistant."
MAX_CODE_CHARS = 1600

CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)

SKIP_DIRS = {"test", "tests", "site-packages", "idle_test", "__pycache__", "lib2to3"}


def stdlib_files(root: Path | None = None) -> list[Path]:
    root = Path(root or sysconfig.get_paths()["stdlib"])
    out = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root)
        if any(part in SKIP_DIRS for part in rel.parts[:-1]) or rel.name.startswith("test_"):
            continue
        out.append(p)
    return out


def _requests(name: str, kind: str, module: str, doc: str | None, args: str) -> list[str]:
    what = {"def": "function", "class": "class", "method": "method"}[kind]
    reqs = [
        f"Write a Python {what} `{name}`.",
        f"Show me the `{name}` {what} from the `{module}` module.",
        f"How is `{name}` implemented in `{module}`?",
        f"Implement `{name}({args})` in Python." if kind != "class" else f"Write the class `{name}`.",
    ]
    if doc:
        first = doc.strip().split("\n")[0].strip()
        if 8 <= len(first) <= 160:
            reqs += [first, f"Write Python code for this: {first}"]
    return reqs


def chat_samples(files: list[Path], seed: int = 0) -> list[str]:
    """One ChatML conversation per function/class/method, deterministic for a seed."""
    rng = random.Random(seed)
    root = Path(sysconfig.get_paths()["stdlib"])
    samples = []
    for path in files:
        try:
            src = path.read_text(encoding="utf-8")
            tree = ast.parse(src)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        nodes = []
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                nodes.append((node, "def"))
            elif isinstance(node, ast.ClassDef):
                nodes.append((node, "class"))
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and not sub.name.startswith("__"):
                        nodes.append((sub, "method"))
        for node, kind in nodes:
            seg = ast.get_source_segment(src, node, padded=True)
            if not seg:
                continue
            code = textwrap.dedent(seg).strip("\n")
            if len(code) > MAX_CODE_CHARS or len(code) < 40:
                continue
            args = ""
            if kind != "class":
                args = ", ".join(a.arg for a in node.args.args)
            req = rng.choice(_requests(node.name, kind, module, ast.get_docstring(node), args))
            intro = rng.choice([f"Here is `{node.name}` from `{module}`:\n", ""])
            conv = ""
            if rng.random() < 0.5:
                conv += f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"
            conv += f"<|im_start|>user\n{req}<|im_end|>\n"
            conv += f"<|im_start|>assistant\n{intro}```python\n{code}\n```<|im_end|>\n"
            samples.append(conv)
    rng.shuffle(samples)
    return samples


def train_tokenizer(texts: list[str], vocab: int, out: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=SPECIALS, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), min_frequency=2,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    tok.save(str(out))


def load_vocab(tok_json: Path) -> tuple[list[str], list[str]]:
    """tokens (id order) and merges ("a b") from a tokenizers BPE json."""
    j = json.loads(tok_json.read_text(encoding="utf-8"))
    vocab = j["model"]["vocab"]
    tokens = [None] * len(vocab)
    for t, i in vocab.items():
        tokens[i] = t
    for a in j["added_tokens"]:
        if a["id"] >= len(tokens):
            tokens.extend([None] * (a["id"] + 1 - len(tokens)))
        tokens[a["id"]] = a["content"]
    assert all(t is not None for t in tokens)
    merges = [m if isinstance(m, str) else " ".join(m) for m in j["model"]["merges"]]
    return tokens, merges


def encode_samples(tok_json: Path, samples: list[str]) -> list[np.ndarray]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tok_json))
    return [np.asarray(e.ids, dtype=np.uint16) for e in tok.encode_batch(samples)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("training/work"))
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    files = stdlib_files()
    samples = chat_samples(files, a.seed)
    print(f"{len(files)} stdlib files -> {len(samples)} conversations, "
          f"{sum(map(len, samples)) / 1e6:.1f} M chars")
    tok_json = a.out / "tokenizer.json"
    train_tokenizer(samples, a.vocab, tok_json)
    enc = encode_samples(tok_json, samples)
    n_val = max(50, len(enc) // 50)
    for name, part in (("val", enc[:n_val]), ("train", enc[n_val:])):
        flat = np.concatenate(part)
        offs = np.cumsum([0] + [len(e) for e in part]).astype(np.int64)
        np.save(a.out / f"{name}_tokens.npy", flat)
        np.save(a.out / f"{name}_offsets.npy", offs)
        print(f"{name}: {len(part)} conversations, {len(flat) / 1e6:.2f} M tokens")
    (a.out / "prompts_val.json").write_text(json.dumps(
        [s.split("<|im_start|>assistant\n")[0] + "<|im_start|>assistant\n" for s in samples[:n_val]]))


if __name__ == "__main__":
    main()
