"""The table of contents: every chapter page, its part, title and one-line idea.

app.py builds the navigation from it, the tests run every page in it, and the benchmark times them.
Page files live one folder below pages/ (pages/<part>/<chapter>.py) so that Streamlit never treats
them as legacy auto-discovered pages.
"""

from __future__ import annotations

from dataclasses import dataclass

PARTS = ("Absolute", "Relative", "Rotary", "Contextual", "Beyond", "Labs")


@dataclass(frozen=True)
class Chapter:
    key: str  # also the URL path: /<key>
    part: str
    path: str  # relative to the app's root
    title: str
    icon: str
    idea: str  # the one line under the title


CHAPTERS: tuple[Chapter, ...] = (
    Chapter(
        "why-order", "Absolute", "pages/absolute/why_order.py", "Why order matters", ":material/shuffle:",
        "Attention without positions cannot tell “dog bites man” from “man bites dog”: "
        "shuffle the words and the outputs are merely shuffled.",
    ),
    Chapter(
        "sinusoidal", "Absolute", "pages/absolute/sinusoidal.py", "Sinusoidal APE", ":material/waves:",
        "Each position gets a fixed vector of sines and cosines at geometrically spaced frequencies, "
        "added to the word's embedding.",
    ),
    Chapter(
        "learned", "Absolute", "pages/absolute/learned.py", "Learned APE", ":material/table_rows:",
        "Each position gets a trained row of a lookup table — and a position past the last row "
        "gets nothing at all.",
    ),
    Chapter(
        "trouble", "Absolute", "pages/absolute/trouble.py", "The trouble with absolute positions",
        ":material/warning:",
        "Absolute vectors move when the sentence is shifted, run out when it is long, and only "
        "indirectly say how far apart two words are.",
    ),
    Chapter(
        "shaw", "Relative", "pages/relative/shaw.py", "Shaw relative positions", ":material/straighten:",
        "Attention looks up a learned vector by the distance j − i between two words, clipped at ±k: "
        "near pairs are told apart, far pairs share one vector.",
    ),
    Chapter(
        "transformer-xl", "Relative", "pages/relative/transformer_xl.py", "Transformer-XL", ":material/memory:",
        "Only the distance i − j between query and key enters attention, split into four terms: "
        "content, content-dependent position, a global content bias u and a global position bias v.",
    ),
    Chapter(
        "t5", "Relative", "pages/relative/t5.py", "T5 bias", ":material/stairs:",
        "One learned number per head for each bucket of distances — exact buckets up close, ever "
        "wider log buckets far away — added straight to the attention logits.",
    ),
    Chapter(
        "deberta", "Relative", "pages/relative/deberta.py", "DeBERTa", ":material/call_split:",
        "Content and relative position stay separate vectors: attention adds content→content, "
        "content→position and position→content scores, with log buckets for far distances.",
    ),
    Chapter(
        "rope", "Rotary", "pages/rotary/rope.py", "RoPE", ":material/rotate_right:",
        "Rotate every query and key pair by an angle proportional to its position: the dot product "
        "then sees only how far apart two words are.",
    ),
    Chapter(
        "rope-scaling", "Rotary", "pages/rotary/rope_scaling.py", "Stretching RoPE", ":material/expand:",
        "Past the trained length the slow pairs turn to angles never seen in training: PI, NTK and "
        "YaRN change the frequencies so that they do not; xPos damps distant scores instead.",
    ),
    Chapter(
        "alibi", "Rotary", "pages/rotary/alibi.py", "ALiBi and NoPE", ":material/trending_down:",
        "ALiBi adds no vector at all: each head subtracts a fixed slope times the distance from its "
        "scores. NoPE adds nothing whatsoever — and a causal mask still lets a token count.",
    ),
    Chapter(
        "cope", "Contextual", "pages/contextual/cope.py", "CoPE", ":material/format_list_numbered:",
        "Each head chooses what to count — words, sentences, a name — and a key's position is the "
        "number of counted tokens between it and the query.",
    ),
    Chapter(
        "spline", "Beyond", "pages/beyond/spline.py", "Spline-based Transformers", ":material/gesture:",
        "No positional encoding at all: the sequence becomes a smooth curve through a few learned control "
        "points in latent space, and where a point sits on that curve tells the decoder where it is.",
    ),
    Chapter(
        "derivations", "Beyond", "pages/beyond/derivations.py", "Derivations", ":material/functions:",
        "Every relative-position identity in the atlas, line by line, each line proven from the one "
        "before by a computer algebra system when the page runs — and checked again on numbers you pick.",
    ),
    Chapter(
        "attention-lab", "Labs", "pages/labs/attention_lab.py", "Attention lab", ":material/science:",
        "One sentence through several encodings side by side: the same words, seed and heads — only "
        "the positions differ. Switch terms off, turn content down, shift it, stretch it.",
    ),
    Chapter(
        "minilm", "Labs", "pages/labs/minilm.py", "A real model: MiniLM", ":material/psychology:",
        "A trained 6-layer BERT on your sentence: its own word pieces, all 72 attention heads, the ones "
        "that attend by position — and what happens when the position ids move.",
    ),
    Chapter(
        "toy-lab", "Labs", "pages/labs/toy_tasks.py", "Toy-task lab", ":material/model_training:",
        "Flip-Flop, Selective Copy and Counting — the CoPE paper's tasks — learnt by a tiny Transformer "
        "with each encoding, then tested on strings sparser and longer than any it trained on.",
    ),
)

BY_KEY = {c.key: c for c in CHAPTERS}
