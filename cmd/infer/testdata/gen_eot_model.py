"""Writes llama3-eot.gguf.gz: a tiny Llama model on the Llama 3 vocabulary
(tokens, types and merges copied from llama.cpp's ggml-vocab-llama-bpe.gguf,
rt/tokenizer/testdata/vocab) whose end-of-sequence id (128001) differs from
its end-of-turn id (128009, tokenizer.ggml.eot_token_id, as llama.cpp's
converter writes for Llama 3), with weights rigged so greedy decoding emits
<|eot_id|> first whatever the prompt: one layer whose projections are all
zero (the layer adds nothing), RMSNorm weights 1, and tied embeddings of
0.01 in every entry except <|eot_id|>'s row of 1.0, so the logits are
hidden x 0.01 for every token and hidden x 1 for 128009. A generator that
stops only at eos would emit <|eot_id|> until its token limit.

Usage (gguf==0.19.0, numpy): python gen_eot_model.py
"""
import bz2
import gzip
import os
import shutil
import tempfile

import numpy as np
from gguf import GGUFReader, GGUFWriter

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = os.path.join(HERE, "../../../rt/tokenizer/testdata/vocab/ggml-vocab-llama-bpe.gguf.bz2")
TEMPLATE = os.path.join(HERE, "../../../rt/chat/testdata/templates/meta-llama-Llama-3.2-3B-Instruct.jinja")
HIDDEN, FFN, HEADS, KV_HEADS, EOT = 8, 16, 2, 1, 128009


def main():
    with tempfile.TemporaryDirectory() as tmp:
        vocab_path = os.path.join(tmp, "vocab.gguf")
        with bz2.open(VOCAB) as src, open(vocab_path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        r = GGUFReader(vocab_path)
        tokens = [bytes(r.fields["tokenizer.ggml.tokens"].parts[i]).decode() for i in r.fields["tokenizer.ggml.tokens"].data]
        types = [int(r.fields["tokenizer.ggml.token_type"].parts[i][0]) for i in r.fields["tokenizer.ggml.token_type"].data]
        merges = [bytes(r.fields["tokenizer.ggml.merges"].parts[i]).decode() for i in r.fields["tokenizer.ggml.merges"].data]
        vocab = len(tokens)
        assert tokens[EOT] == "<|eot_id|>", tokens[EOT]

        out = os.path.join(tmp, "llama3-eot.gguf")
        w = GGUFWriter(out, "llama")
        w.add_name("llama3-eot")
        w.add_block_count(1)
        w.add_context_length(256)
        w.add_embedding_length(HIDDEN)
        w.add_feed_forward_length(FFN)
        w.add_head_count(HEADS)
        w.add_head_count_kv(KV_HEADS)
        w.add_rope_freq_base(500000.0)
        w.add_layer_norm_rms_eps(1e-5)
        w.add_vocab_size(vocab)
        w.add_rope_dimension_count(HIDDEN // HEADS)
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("llama-bpe")
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(merges)
        w.add_bos_token_id(128000)
        w.add_eos_token_id(128001)
        w.add_eot_token_id(EOT)
        with open(TEMPLATE) as f:
            w.add_chat_template(f.read())

        emb = np.full((vocab, HIDDEN), 0.01, dtype=np.float16)
        emb[EOT] = 1.0
        w.add_tensor("token_embd.weight", emb)
        w.add_tensor("output_norm.weight", np.ones(HIDDEN, dtype=np.float32))
        hd = HIDDEN // HEADS
        for name, shape in [("attn_norm", (HIDDEN,)), ("ffn_norm", (HIDDEN,))]:
            w.add_tensor(f"blk.0.{name}.weight", np.ones(shape, dtype=np.float32))
        for name, shape in [("attn_q", (HEADS * hd, HIDDEN)), ("attn_k", (KV_HEADS * hd, HIDDEN)), ("attn_v", (KV_HEADS * hd, HIDDEN)),
                            ("attn_output", (HIDDEN, HEADS * hd)), ("ffn_gate", (FFN, HIDDEN)), ("ffn_up", (FFN, HIDDEN)), ("ffn_down", (HIDDEN, FFN))]:
            w.add_tensor(f"blk.0.{name}.weight", np.zeros(shape, dtype=np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        with open(out, "rb") as src, open(os.path.join(HERE, "llama3-eot.gguf.gz"), "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as dst:  # reproducible bytes
                shutil.copyfileobj(src, dst)
    print("wrote", os.path.join(HERE, "llama3-eot.gguf.gz"), os.path.getsize(os.path.join(HERE, "llama3-eot.gguf.gz")), "bytes")


if __name__ == "__main__":
    main()
