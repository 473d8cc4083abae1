#!/usr/bin/env python3
"""llama.cpp's multimodal path (libmtmd, through llama-cpp-python's
mtmd_cpp bindings, CPU) on a text GGUF and its mmproj ("clip") GGUF: the
peer of `infer generate --model TEXT.gguf --mmproj MMPROJ.gguf --chat
--image IMG --json` for scripts/bench_vision.sh (BENCH_VLM_GGUF=1, issue 34).

One user turn, the image then the prompt, rendered with the text GGUF's
chat template (tokenizer.chat_template, or --chat-template FILE) as HF
renders it (jinja2, trim_blocks, lstrip_blocks); the model's image
placeholder in the rendered text (Qwen2-VL's <|vision_start|><|image_pad|>
<|vision_end|>, Gemma 3's <start_of_image>, else <image>) becomes mtmd's
media marker, and mtmd_tokenize splits the text around it and expands the
image into its chunks (its own preprocessing: SmolVLM's tiles with their
<row_r_col_c> / <global-img> wrappers, Gemma 3's <start_of_image>, ...),
adding BOS where the vocabulary says so. llama.cpp's wrappers are its own:
for Gemma 3 it puts no "\n\n" around <start_of_image> where HF's processor
does (--image-text '\n\n{marker}\n\n' adds them). The chunks are then evaluated in
order: a text chunk by mtmd_helper_eval_chunk_single, an image chunk by
mtmd_encode_chunk (the encoder: tower and projector) then
mtmd_helper_decode_image_chunk (its embeddings through the text model), so
the encoder's time is measured apart from the prefill. The first token is
the argmax of the last logits (lowest id on ties, as archc and
torch.argmax).

Prints one JSON object:
  image_encode_s         reading and decoding the image file, mtmd's
                         preprocessing (inside mtmd_tokenize) and the
                         encoder over every image chunk: what archc's
                         image_encode_s counts (decoding, preprocessing,
                         encoder)
  image_preprocess_s     the first two of those, image_encoder_s the third
  time_to_first_token_s  image_encode_s + tokenizing the text + every
                         chunk's prefill + the argmax
  image_tokens           the image chunks' embedding count (wrapper text
                         tokens excluded), image_chunks their number (one
                         per tile for SmolVLM)
  prompt_tokens          every position of the prompt: text tokens plus
                         image embeddings (mtmd_helper_get_n_tokens)
  text_tokens            the text chunks' token ids, in order
  tokens                 [the greedy first token]
plus load_s (text model, context and mmproj with its warmup), threads and
llama.cpp's system info.

Usage:
  python scripts/bench_vision_mtmd.py TEXT.gguf MMPROJ.gguf IMAGE PROMPT
         [--threads 2] [--n-ctx 4096] [--n-batch 512] [--chat-template FILE]
         [--image-text TEXT]
"""
import argparse
import ctypes
import json
import sys
import time

import numpy as np

import llama_cpp
import llama_cpp.mtmd_cpp as mtmd
from llama_cpp import Llama

# The image placeholder a template renders for an image part, longest
# first: mtmd adds its own wrappers (vision_start/end, start/end_of_image).
PLACEHOLDERS = ("<|vision_start|><|image_pad|><|vision_end|>", "<start_of_image>", "<image>")


def render(template, prompt, image_text, bos, eos):
    """The chat prompt of one user turn (image, then text) with the image
    placeholder replaced by image_text (mtmd's marker)."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = lambda x, **kw: json.dumps(x, **kw)

    def raise_exception(msg):
        raise ValueError(msg)

    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": prompt}]}]
    text = env.from_string(template).render(messages=messages, add_generation_prompt=True, bos_token=bos,
                                            eos_token=eos, raise_exception=raise_exception)
    for p in PLACEHOLDERS:
        if p in text:
            return text.replace(p, image_text, 1)
    sys.exit(f"bench_vision_mtmd.py: the chat template rendered no image placeholder {PLACEHOLDERS}: {text!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="text GGUF")
    ap.add_argument("mmproj", help="mmproj (clip) GGUF")
    ap.add_argument("image")
    ap.add_argument("prompt")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=4096, help="context (KV cache) capacity in tokens")
    ap.add_argument("--n-batch", type=int, default=512)
    ap.add_argument("--chat-template", help="a Jinja file instead of the GGUF's tokenizer.chat_template")
    ap.add_argument("--image-text", default="{marker}",
                    help="what replaces the image placeholder, {marker} standing for mtmd's media marker "
                         "(e.g. '\\n\\n{marker}\\n\\n' for the newlines HF's Gemma 3 processor puts around the image)")
    a = ap.parse_args()

    t0 = time.perf_counter()
    llm = Llama(model_path=a.model, n_ctx=a.n_ctx, n_batch=a.n_batch, n_ubatch=a.n_batch,
                n_threads=a.threads, n_threads_batch=a.threads, logits_all=False, verbose=False)
    params = mtmd.mtmd_context_params_default()
    params.use_gpu = False
    params.print_timings = False
    params.n_threads = a.threads
    ctx = mtmd.mtmd_init_from_file(a.mmproj.encode(), llm.model, params)
    if ctx is None:
        sys.exit(f"bench_vision_mtmd.py: mtmd_init_from_file({a.mmproj}) failed")
    if not mtmd.mtmd_support_vision(ctx):
        sys.exit(f"bench_vision_mtmd.py: {a.mmproj} has no vision encoder")
    load_s = time.perf_counter() - t0

    if a.chat_template:
        with open(a.chat_template) as f:
            template = f.read()
    else:
        template = llm.metadata.get("tokenizer.chat_template")
        if not template:
            sys.exit(f"bench_vision_mtmd.py: {a.model} has no tokenizer.chat_template; pass --chat-template")
    piece = lambda t: llm.detokenize([t], special=True).decode(errors="ignore") if t >= 0 else ""
    image_text = a.image_text.replace("\\n", "\n").replace("{marker}", mtmd.mtmd_default_marker().decode())
    text = render(template, a.prompt, image_text, piece(llm.token_bos()), piece(llm.token_eos()))
    n_vocab = llm.n_vocab()
    lctx = llm._ctx.ctx

    # Timed from here: the request, as archc's time to first token.
    t_start = time.perf_counter()
    with open(a.image, "rb") as f:
        data = f.read()
    buf = (ctypes.c_uint8 * len(data)).from_buffer(bytearray(data))
    bitmap = mtmd.mtmd_helper_bitmap_init_from_buf(ctx, buf, len(data), False)
    if bitmap is None:
        sys.exit(f"bench_vision_mtmd.py: libmtmd could not decode {a.image}")
    inp = mtmd.mtmd_input_text()
    raw = text.encode()
    inp.text, inp.text_len, inp.add_special, inp.parse_special = raw, len(raw), True, True
    chunks = mtmd.mtmd_input_chunks_init()
    bitmaps = (mtmd.mtmd_bitmap_p_ctypes * 1)(bitmap)
    rc = mtmd.mtmd_tokenize(ctx, chunks, ctypes.byref(inp), bitmaps, 1)
    if rc != 0:
        sys.exit(f"bench_vision_mtmd.py: mtmd_tokenize failed ({rc})")
    t_tok = time.perf_counter()
    n = mtmd.mtmd_input_chunks_size(chunks)
    encoder_s, image_tokens, image_chunks, text_tokens = 0.0, 0, 0, []
    n_past = 0
    for i in range(n):
        chunk = mtmd.mtmd_input_chunks_get(chunks, i)
        last = i == n - 1
        new_past = llama_cpp.llama_pos(n_past)  # the helper adds a text chunk's tokens to it
        if mtmd.mtmd_input_chunk_get_type(chunk) == mtmd.MTMD_INPUT_CHUNK_TYPE_TEXT:
            k = ctypes.c_size_t()
            ids = mtmd.mtmd_input_chunk_get_tokens_text(chunk, ctypes.byref(k))
            text_tokens += [ids[j] for j in range(k.value)]
            rc = mtmd.mtmd_helper_eval_chunk_single(ctx, lctx, chunk, n_past, 0, a.n_batch, last, ctypes.byref(new_past))
        else:
            image_chunks += 1
            image_tokens += mtmd.mtmd_input_chunk_get_n_tokens(chunk)
            te = time.perf_counter()
            rc = mtmd.mtmd_encode_chunk(ctx, chunk)
            encoder_s += time.perf_counter() - te
            if rc != 0:
                sys.exit(f"bench_vision_mtmd.py: mtmd_encode_chunk failed ({rc})")
            embd = mtmd.mtmd_get_output_embd(ctx)
            rc = mtmd.mtmd_helper_decode_image_chunk(ctx, lctx, chunk, embd, n_past, 0, a.n_batch,
                                                     ctypes.byref(new_past), mtmd.mtmd_helper_post_decode_callback(), None)
            if rc == 0 and last:
                sys.exit("bench_vision_mtmd.py: the prompt ends with the image: no logits for a first token")
        if rc != 0:
            sys.exit(f"bench_vision_mtmd.py: evaluating chunk {i} failed ({rc})")
        n_past = new_past.value
    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(lctx, -1), shape=(n_vocab,))
    tok = int(np.argmax(logits))
    ttft = time.perf_counter() - t_start
    prompt_tokens = mtmd.mtmd_helper_get_n_tokens(chunks)
    mtmd.mtmd_input_chunks_free(chunks)
    mtmd.mtmd_bitmap_free(bitmap)
    mtmd.mtmd_free(ctx)
    preprocess_s = t_tok - t_start  # file, decode, tokenize (the image's preprocessing; text tokenizing is small)
    print(json.dumps({
        "peer": "llama.cpp mtmd",
        "llama_cpp_python": llama_cpp.__version__,
        "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip(),
        "threads": a.threads,
        "load_s": load_s,
        "image_encode_s": preprocess_s + encoder_s,
        "image_preprocess_s": preprocess_s,
        "image_encoder_s": encoder_s,
        "time_to_first_token_s": ttft,
        "image_tokens": image_tokens,
        "image_chunks": image_chunks,
        "prompt_tokens": prompt_tokens,
        "n_past": n_past,
        "text_tokens": text_tokens,
        "tokens": [tok],
        "prompt_text": text,
    }))


if __name__ == "__main__":
    main()
