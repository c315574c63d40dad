"""Write the demo pair as GGUF: the target as arch `llama`, the draft as arch `dflash`.

Both files carry the same byte-level BPE tokenizer (model "gpt2", pre "gpt-2", tokens + merges),
the ChatML template, eos = <|im_end|>. The draft has `tokenizer.ggml.mask_token_id` and no
`token_embd`/`output`: llama.cpp borrows the target's through `ctx_other`.

Raw `dflash.*` keys are written by name (PyPI gguf 0.19.0 has no DFLASH arch).
Layouts: a torch Linear weight [out, in] is the numpy view of the ggml tensor {in, out}; no permutes,
because `model.py` applies RoPE in ggml's own NORM (llama) / NEOX (dflash) modes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gguf
import numpy as np
import torch

from data import CHAT_TEMPLATE, EOT, IM_END, MASK, SPECIALS, load_vocab
from model import Draft, DraftConfig, Target, TargetConfig

Q8 = gguf.GGMLQuantizationType.Q8_0


def _tokenizer(w: gguf.GGUFWriter, tokens: list[str], merges: list[str], mask: bool) -> None:
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    types = [gguf.TokenType.CONTROL if t in SPECIALS else gguf.TokenType.NORMAL for t in tokens]
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(EOT)
    w.add_eos_token_id(IM_END)
    w.add_pad_token_id(EOT)
    w.add_add_bos_token(False)
    w.add_add_eos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)
    if mask:
        w.add_mask_token_id(MASK)


# Kept in F32 whatever the draft's type: a folded feature scale (model.Draft.fold_feat_scale) leaves
# weights of ~1e-6 on a real target's outlier dims, below F16's normal range.
F32_ALWAYS = {"fc.weight"}


def _put(w: gguf.GGUFWriter, name: str, t: torch.Tensor, qtype: str) -> None:
    a = t.detach().to(torch.float32).cpu().numpy()
    if a.ndim == 1 or qtype == "f32" or name in F32_ALWAYS:
        w.add_tensor(name, a.astype(np.float32))
    elif qtype == "f16":
        w.add_tensor(name, a.astype(np.float16))
    elif qtype == "q8_0":
        w.add_tensor(name, gguf.quants.quantize(a, Q8), raw_dtype=Q8)
    else:
        raise ValueError(qtype)


def _put_all(w: gguf.GGUFWriter, model: torch.nn.Module, names: dict[str, str], qtype: str) -> None:
    """Write every tensor of `names` (gguf name -> state key, in file order): the same map that
    load_gguf_weights reads back with for the fidelity check."""
    sd = model.state_dict()
    for gguf_name, key in names.items():
        _put(w, gguf_name, sd[key], qtype)


def export_target(model: Target, tokens: list[str], merges: list[str], path: Path, qtype: str = "q8_0",
                  name: str = "AtomicChat demo target") -> None:
    c = model.c
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(name)
    w.add_context_length(c.ctx)
    w.add_embedding_length(c.n_embd)
    w.add_block_count(c.n_layer)
    w.add_feed_forward_length(c.n_ff)
    w.add_head_count(c.n_head)
    w.add_head_count_kv(c.n_head_kv)
    w.add_layer_norm_rms_eps(c.eps)
    w.add_rope_dimension_count(c.head_dim)
    w.add_rope_freq_base(c.rope_base)
    w.add_vocab_size(c.vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if qtype == "q8_0" else
                    gguf.LlamaFileType.MOSTLY_F16 if qtype == "f16" else gguf.LlamaFileType.ALL_F32)
    _tokenizer(w, tokens, merges, mask=False)
    _put_all(w, model, target_names(c), qtype)  # tied head: no output.weight
    _write(w)


def export_draft(model: Draft, tokens: list[str] | None, merges: list[str] | None, path: Path, qtype: str = "f16",
                 name: str = "AtomicChat demo DFlash draft", tokenizer_from: Path | None = None,
                 extra: dict[str, str] | None = None,
                 head: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """tokenizer_from: a target GGUF whose tokenizer.* keys are copied verbatim (then tokens/merges
    are not used); extra: general.* string keys (license, description, ...).

    head: (sorted token ids, their rows of the target's tied embedding [n, E]) for a reduced output
    head: the draft then ships `output.weight` with those rows and `d2t` (int64 target id per row),
    and llama.cpp scatters its logits back to the full vocabulary (-inf elsewhere). A real target's
    head is most of a small draft's cost (SmolLM2: 49,152 x 576 per drafted row); the draft can only
    ever propose tokens it was trained to, so a head over those loses no acceptance."""
    c = model.c
    w = gguf.GGUFWriter(str(path), "dflash")
    w.add_name(name)
    w.add_uint32("dflash.context_length", c.ctx)
    w.add_uint32("dflash.embedding_length", c.n_embd)
    w.add_uint32("dflash.block_count", c.n_layer)
    w.add_uint32("dflash.feed_forward_length", c.n_ff)
    w.add_uint32("dflash.attention.head_count", c.n_head)
    w.add_uint32("dflash.attention.head_count_kv", c.n_head_kv)
    w.add_uint32("dflash.attention.key_length", c.head_dim)
    w.add_uint32("dflash.attention.value_length", c.head_dim)
    w.add_float32("dflash.attention.layer_norm_rms_epsilon", c.eps)
    w.add_float32("dflash.rope.freq_base", c.rope_base)
    w.add_uint32("dflash.rope.dimension_count", c.head_dim)
    w.add_uint32("dflash.block_size", c.block_size)
    w.add_bool("dflash.attention.causal", False)
    w.add_array("dflash.target_layers", [int(x) for x in c.target_layers])
    if tokenizer_from is not None:
        n_vocab = len(gguf.GGUFReader(str(tokenizer_from)).fields["tokenizer.ggml.tokens"].contents())
    else:
        n_vocab = len(tokens)
    w.add_uint32("dflash.vocab_size", n_vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if qtype == "f16" else
                    gguf.LlamaFileType.MOSTLY_Q8_0 if qtype == "q8_0" else gguf.LlamaFileType.ALL_F32)
    if tokenizer_from is not None:
        copy_tokenizer(w, tokenizer_from, c.mask_token_id)
    else:
        _tokenizer(w, tokens, merges, mask=True)
    for k, v in (extra or {}).items():
        w.add_string(k, v)
    _put_all(w, model, draft_names(c), qtype)
    if head is not None:
        ids, rows = head
        if len(ids) != len(rows) or np.any(np.diff(ids) <= 0) or ids[0] < 0 or ids[-1] >= n_vocab:
            raise ValueError("reduced head: ids must be sorted, unique and inside the vocabulary, one row each")
        _put(w, "output.weight", torch.from_numpy(np.ascontiguousarray(rows, np.float32)), qtype)
        w.add_tensor("d2t", np.ascontiguousarray(ids, np.int64))
    _write(w)


def _write(w: gguf.GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def load_gguf_weights(model: torch.nn.Module, path: Path, names: dict[str, str], strict: bool = False) -> None:
    """Load (dequantized) tensors from a GGUF back into a torch model: names maps gguf -> state key.
    strict: every name must be in the file."""
    r = gguf.GGUFReader(str(path))
    sd = model.state_dict()
    seen = set()
    for t in r.tensors:
        if t.name not in names:
            continue
        a = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        key = names[t.name]
        sd[key].copy_(torch.from_numpy(a.reshape(sd[key].shape)))
        seen.add(t.name)
    if strict and seen != set(names):
        raise ValueError(f"{path}: missing tensors {sorted(set(names) - seen)[:5]}")


def draft_head_ids(path: Path) -> np.ndarray:
    """The target ids of a reduced-head draft GGUF's output rows (its `d2t`)."""
    t = {t.name: t for t in gguf.GGUFReader(str(path)).tensors}.get("d2t")
    assert t is not None, f"{path} has no reduced head (d2t)"
    return np.asarray(t.data, np.int64)


def head_token_ids(paths: list[Path]) -> np.ndarray:
    """Sorted target ids for a reduced head: the tokens of each distill.npz, and the `d2t` of each draft
    GGUF (a previous round's head, so a new round's data does not drop tokens the draft had)."""
    return np.unique(np.concatenate([draft_head_ids(p) if p.suffix == ".gguf" else np.load(p)["tokens"].astype(np.int64)
                                     for p in paths]))


def load_target_gguf(path: Path, embd_only: bool = False):
    """A `Target` mirror of a llama-arch GGUF (config from its metadata, weights dequantized from any
    type gguf.quants knows: Q4_1, Q8_0, F16, ...). embd_only: just (config, token_embd [V, E] fp32),
    which is all the draft trainer needs (the tied head is the embedding), plus the target's final
    norm weight [E] (a good start for the draft's own output_norm, which feeds the same head)."""
    c = TargetConfig.from_gguf(path)
    if embd_only:
        r = gguf.GGUFReader(str(path))
        t = {t.name: t for t in r.tensors}
        a = gguf.quants.dequantize(t["token_embd.weight"].data, t["token_embd.weight"].tensor_type)
        n = np.asarray(t["output_norm.weight"].data, np.float32).reshape(c.n_embd)
        return c, torch.from_numpy(a.astype(np.float32).reshape(c.vocab, c.n_embd)), torch.from_numpy(n.copy())
    m = Target(c)
    load_gguf_weights(m, path, target_names(c), strict=True)
    return m.eval()


def copy_tokenizer(w: gguf.GGUFWriter, src: Path, mask_id: int) -> None:
    """Copy every tokenizer.* key of the target GGUF into the draft (identical vocabulary, merges,
    token types, specials and chat template), and add the mask token the draft's blocks use."""
    r = gguf.GGUFReader(str(src))
    for k, f in r.fields.items():
        if not k.startswith("tokenizer."):
            continue
        vt = f.types[0]
        if vt == gguf.GGUFValueType.ARRAY:
            w.add_key_value(k, f.contents(), vt, sub_type=f.types[-1])
        else:
            w.add_key_value(k, f.contents(), vt)
    w.add_mask_token_id(mask_id)


def target_names(c: TargetConfig) -> dict[str, str]:
    n = {"token_embd.weight": "tok_embd.weight", "output_norm.weight": "output_norm.weight"}
    for i in range(c.n_layer):
        for g, s in (("attn_norm", "attn_norm"), ("attn_q", "wq"), ("attn_k", "wk"), ("attn_v", "wv"),
                     ("attn_output", "wo"), ("ffn_norm", "ffn_norm"), ("ffn_gate", "ffn.gate"),
                     ("ffn_up", "ffn.up"), ("ffn_down", "ffn.down")):
            n[f"blk.{i}.{g}.weight"] = f"layers.{i}.{s}.weight"
    return n


def draft_names(c: DraftConfig) -> dict[str, str]:
    n = {"fc.weight": "fc.weight", "enc.output_norm.weight": "enc_norm.weight",
         "output_norm.weight": "output_norm.weight"}
    for i in range(c.n_layer):
        for g, s in (("attn_norm", "attn_norm"), ("attn_q", "wq"), ("attn_k", "wk"), ("attn_v", "wv"),
                     ("attn_output", "wo"), ("attn_q_norm", "q_norm"), ("attn_k_norm", "k_norm"),
                     ("ffn_norm", "ffn_norm"), ("ffn_gate", "ffn.gate"), ("ffn_up", "ffn.up"),
                     ("ffn_down", "ffn.down")):
            n[f"blk.{i}.{g}.weight"] = f"layers.{i}.{s}.weight"
    return n


def load_ckpt(path: Path):
    ck = torch.load(path, map_location="cpu", weights_only=False)
    if "draft_cfg" in ck:
        m = Draft(DraftConfig(**{**ck["draft_cfg"], "target_layers": tuple(ck["draft_cfg"]["target_layers"])}))
    else:
        m = Target(TargetConfig(**ck["cfg"]))
    sd = dict(ck["model"])
    if isinstance(m, Draft):
        sd.setdefault("feat_scale", torch.ones_like(m.feat_scale))  # checkpoints from before the scale
    m.load_state_dict(sd)
    if isinstance(m, Draft):
        m.fold_feat_scale()
    return m.eval()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizer", type=Path, default=Path("training/work/tokenizer.json"))
    ap.add_argument("--target-ckpt", type=Path)
    ap.add_argument("--draft-ckpt", type=Path)
    ap.add_argument("--target-out", type=Path, default=Path("resources/demo/demo-target.F32.gguf"))
    ap.add_argument("--draft-out", type=Path, default=Path("resources/demo/demo-dflash.F16.gguf"))
    ap.add_argument("--target-type", default="f32", choices=["q8_0", "f16", "f32"])
    ap.add_argument("--draft-type", default="f16", choices=["q8_0", "f16", "f32"])
    ap.add_argument("--tokenizer-from-gguf", type=Path,
                    help="copy the tokenizer of this target GGUF into the draft (real targets, e.g. SmolLM2)")
    ap.add_argument("--draft-name", default="AtomicChat demo DFlash draft")
    ap.add_argument("--license", default=None, help="general.license of the draft")
    ap.add_argument("--head-tokens", type=Path, nargs="+", default=None,
                    help="distill.npz files and/or earlier draft GGUFs: ship a reduced output head over their "
                         "tokens (with --tokenizer-from-gguf)")
    a = ap.parse_args()
    if a.tokenizer_from_gguf:
        assert not a.target_ckpt, "--tokenizer-from-gguf exports a draft only"
        a.draft_out.parent.mkdir(parents=True, exist_ok=True)
        extra = {"general.license": a.license} if a.license else None
        head = None
        if a.head_tokens:  # the tokens of the distillation data: the labels the head was trained on
            ids = head_token_ids(a.head_tokens)
            _c, embd, _n = load_target_gguf(a.tokenizer_from_gguf, embd_only=True)
            head = (ids, embd.numpy()[ids])
            print(f"reduced head: {len(ids)} of {embd.shape[0]} tokens")
        export_draft(load_ckpt(a.draft_ckpt), None, None, a.draft_out, a.draft_type, a.draft_name,
                     tokenizer_from=a.tokenizer_from_gguf, extra=extra, head=head)
        print("wrote", a.draft_out, a.draft_out.stat().st_size)
        return
    tokens, merges = load_vocab(a.tokenizer)
    if a.target_ckpt:
        a.target_out.parent.mkdir(parents=True, exist_ok=True)
        export_target(load_ckpt(a.target_ckpt), tokens, merges, a.target_out, a.target_type)
        print("wrote", a.target_out, a.target_out.stat().st_size)
    if a.draft_ckpt:
        a.draft_out.parent.mkdir(parents=True, exist_ok=True)
        export_draft(load_ckpt(a.draft_ckpt), tokens, merges, a.draft_out, a.draft_type)
        print("wrote", a.draft_out, a.draft_out.stat().st_size)


if __name__ == "__main__":
    main()
