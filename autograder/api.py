"""The exercise API of SPEC §3 as data: which module each topic lives in, its functions,
and which outputs are caches that stay inside the worker.

A cache is "whatever the student's backward pass needs", so the grader never decodes
it: the worker keeps it and hands back a handle, which the next call passes back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ASSIGNMENT = "rnn_prehistory"


@dataclass(frozen=True)
class Topic:
    id: str
    module: str
    # function name -> indices of returned tuple elements kept in the worker
    functions: dict[str, tuple[int, ...]] = field(default_factory=dict)


TOPICS: dict[str, Topic] = {
    t.id: t
    for t in [
        Topic("bptt", "bptt", {
            "rnn_step_forward": (1,),
            "rnn_step_backward": (),
            "rnn_forward": (1,),
            "rnn_backward": (),
            "rnn_backward_truncated": (),
            "numerical_gradient": (),
            "rel_error": (),
        }),
        Topic("gate_derivative", "gate_derivative", {
            "forget_gate_forward": (1,),
            "forget_gate_backward": (),
            "forget_gate_jacobian": (),
            "cell_gradient_norms": (),
        }),
        Topic("gru_lstm_step", "gru_lstm", {
            "gru_step_forward": (1,),
            "gru_step_backward": (),
            "lstm_step_forward": (2,),
            "lstm_step_backward": (),
            "lstm_forward": (1,),
            "lstm_backward": (),
        }),
        Topic("fault_injection", "fault_injection", {
            "log_abs_cumprod": (),
            "scale_spectral_radius": (),
            "jacobian_chain_norms": (),
            "clip_grad_norm": (),
            "run_fault_injection": (),
        }),
        Topic("beam_attribution", "beam_search", {
            "sequence_score": (),
            "beam_search": (),
            "attribute_error": (),
        }),
        Topic("bleu", "bleu", {
            "ngram_counts": (),
            "modified_precision": (),
            "brevity_penalty": (),
            "corpus_bleu": (),
            "sentence_bleu": (),
        }),
        Topic("attention", "attention", {
            "additive_attention": (),
        }),
    ]
}

MODULES = {t.module: t for t in TOPICS.values()}


def kept_outputs(module: str, function: str) -> tuple[int, ...]:
    topic = MODULES.get(module)
    return topic.functions.get(function, ()) if topic else ()
