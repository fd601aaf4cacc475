"""Rules for onnxruntime's text-generation loops: BeamSearch, WhisperBeamSearch, GreedySearch and
Sampling, and the NGramRepeatBlock score filter.

A generation op runs its decoder subgraph until every sequence ends or reaches ``max_length``
tokens, and pads the rest, so its sequences are exactly ``max_length`` long. The batch size comes
from ``input_ids``; ``max_length``, ``num_beams`` and ``num_return_sequences`` are scalar inputs
whose values are only known when the graph holds them (initializers, constants, folded shapes).
"""
from __future__ import annotations

import enum

from opspec.runtime.contract import InferenceContext, Subgraph, TensorType, attribute, rule
from opspec.runtime.rules._dims import one_value
from opspec.runtime.shape import ShapeError, format_shape, sub_dim


class ModelType(enum.IntEnum):
    """The ``model_type`` attribute of the generation ops: which kind of model drives the search."""

    DECODER_ONLY = 0  # GPT-like: the prompt is (batch, sequence_length) token ids and grows
    ENCODER_DECODER = 1  # T5-like
    WHISPER = 2  # input_ids holds (batch, mel bins, frames) audio features


def positive_scalar(ctx: InferenceContext, name: str, strict: bool):
    """A count input's known value; with ``strict``, a value below 1 is a node error."""
    value = one_value(ctx, name)
    if type(value) is int and value <= 0:
        if strict:
            ctx.fail(f"{ctx.input_name(name)} must be a positive scalar, got {value}")
        return None
    return value


def prompt_shape(ctx: InferenceContext, whisper: bool):
    """input_ids' (batch, length): 2-D token ids, or 3-D audio features for Whisper."""
    shape = ctx.input_shape("input_ids")
    rank = 3 if whisper else 2
    if shape is not None and len(shape) != rank:
        kind = "(batch, features, frames) audio features" if whisper else "(batch, sequence_length) token ids"
        ctx.fail(f"input_ids {format_shape(shape)} must be {rank}-D {kind}")
    if shape is None:
        return None, None
    return shape[0], (None if whisper else shape[1])


def model_type(ctx: InferenceContext) -> int:
    value = ctx.attribute("model_type", ModelType.DECODER_ONLY)
    return value if type(value) is int else ModelType.DECODER_ONLY


def generated_steps(max_length, prompt):
    """How many tokens a decoder-only model generates after its prompt (unknown when the lengths
    contradict each other, a node the kernel refuses at run time)."""
    try:
        return sub_dim(max_length, prompt)
    except ShapeError:
        return None


def check_room_to_generate(ctx: InferenceContext, max_length, prompt) -> None:
    """A decoder-only model's kernel needs max_length above the prompt's length (both known numbers)."""
    if type(max_length) is int and type(prompt) is int and max_length <= prompt:
        ctx.fail(f"max_length {max_length} leaves nothing to generate after a prompt of {prompt} tokens; "
                 "it must be greater")


def vocabulary(ctx: InferenceContext):
    """The vocabulary size: the vocab_size attribute when positive, else the last dim of the decoder
    subgraph's first output (its logits, (batch, sequence, vocabulary)), as the kernel takes it."""
    vocab = ctx.attribute("vocab_size", -1)
    if type(vocab) is int and vocab > 0:
        return vocab
    decoder = ctx.subgraph(ctx.named("decoder"))
    if type(decoder) is not Subgraph or not decoder.outputs:
        return None
    logits = decoder.outputs[0]
    if type(logits) is not TensorType or logits.shape is None or len(logits.shape) != 3:
        return None
    width = logits.shape[2]
    return width if type(width) is int and width > 0 else None


@rule("beam_search", "sequences (batch, num_return_sequences, max_length); sequences_scores (batch, "
      "num_return_sequences); scores (max_length - prompt length, batch, num_beams, vocab_size), the vocabulary "
      "from vocab_size or else the decoder's logits.", decoder=attribute())
def beam_search(ctx: InferenceContext) -> None:
    kind = model_type(ctx)
    batch, prompt = prompt_shape(ctx, kind == ModelType.WHISPER)
    # onnxruntime checks the counts only once all three are known
    counts = ("max_length", "num_beams", "num_return_sequences")
    strict = all(type(one_value(ctx, name)) is int for name in counts)
    max_length, beams, returned = (positive_scalar(ctx, name, strict) for name in counts)
    if type(beams) is int and type(returned) is int and returned > beams:
        ctx.fail(f"num_return_sequences {returned} is more than num_beams {beams}; only the beams can be returned")
    if kind == ModelType.DECODER_ONLY:
        check_room_to_generate(ctx, max_length, prompt)
    ctx.set_output_shape("sequences", (batch, returned, max_length))
    if ctx.has_output("sequences_scores"):
        ctx.set_output_shape("sequences_scores", (batch, returned))
    if ctx.has_output("scores"):
        steps = generated_steps(max_length, prompt) if kind == ModelType.DECODER_ONLY else None
        ctx.set_output_shape("scores", (steps, batch, beams, vocabulary(ctx)))
    for index in ctx.output_range("non_speech_probs"):  # WhisperBeamSearch's alone
        ctx.set_output_shape(index, (batch,))


@rule("greedy_search", "sequences (batch, max_length); Sampling's debugging output filtered_logits is left "
      "unknown (onnxruntime may leave it empty).")
def greedy_search(ctx: InferenceContext) -> None:
    batch, prompt = prompt_shape(ctx, False)
    max_length = positive_scalar(ctx, "max_length", True)
    if model_type(ctx) == ModelType.DECODER_ONLY:
        check_room_to_generate(ctx, max_length, prompt)
    ctx.set_output_shape("sequences", (batch, max_length))


@rule("ngram_repeat_block", "scores_out takes the shape of scores (batch, vocab_size).")
def ngram_repeat_block(ctx: InferenceContext) -> None:
    ctx.set_output_shape("scores_out", ctx.input_shape("scores"))

