"""Tiny random Hugging Face encoder-decoders and their tokenizers, built on the spot (nothing downloaded):
a SentencePiece model trained on a few sentences (Marian, T5, M2M100, mBART) or a byte-level BPE (BART), and a
model of a few thousand weights saved with ``save_pretrained`` (safetensors)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

transformers = pytest.importorskip("transformers")
spm = pytest.importorskip("sentencepiece")

import torch  # noqa: E402

SENTENCES = [
    "the black cat eats the apple .",
    "le chat noir mange la pomme .",
    "the girl sees the small dog near the river",
    "la fille voit le petit chien près de la rivière",
    "a house , a garden and a tree",
    "une maison , un jardin et un arbre",
]
SOURCE = "the black cat eats the apple ."
REFERENCE = "le chat noir mange la pomme ."
GOLD = "0-0 1-2 2-1 3-3 4-4 5-5 6-6"  # SOURCE x REFERENCE, Pharaoh source-target
# the sizes of the BART-like models (Marian, BART, M2M100, mBART), and BART's special token ids
SIZES = {
    "d_model": 16,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "encoder_ffn_dim": 32,
    "decoder_ffn_dim": 32,
    "max_position_embeddings": 128,
}
BART_IDS = {"pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2}


def _sentencepiece(size: int = 60) -> bytes:
    """A unigram SentencePiece model of the sentences: ids 0 <pad>, 1 </s>, 2 <unk>."""
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SENTENCES * 4),
        model_writer=buf,
        vocab_size=size,
        model_type="unigram",
        character_coverage=1.0,
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    return buf.getvalue()


def _seed(seed: int) -> None:
    torch.manual_seed(seed)


def marian_folder(folder: Path, seed: int = 0) -> Path:
    """A MarianMT folder as the Helsinki-NLP ones: source.spm, target.spm, vocab.json, config, safetensors.
    Decoder: 3 layers of 4 cross-attention heads."""
    folder.mkdir(parents=True, exist_ok=True)
    model = _sentencepiece()
    (folder / "source.spm").write_bytes(model)
    (folder / "target.spm").write_bytes(model)
    sp = spm.SentencePieceProcessor(model_proto=model)
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2}
    for i in range(sp.get_piece_size()):
        vocab.setdefault(sp.id_to_piece(i), len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = transformers.MarianTokenizer(
        str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json")
    )
    tokenizer.save_pretrained(folder)
    _seed(seed)
    sizes = {**SIZES, "decoder_layers": 3, "decoder_attention_heads": 4}
    ids = {"pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0, "forced_eos_token_id": 1}
    config = transformers.MarianConfig(vocab_size=len(vocab), **sizes, **ids)
    transformers.MarianMTModel(config).save_pretrained(folder)
    return folder


def t5_folder(folder: Path, seed: int = 0) -> Path:
    """A T5 folder (tokenizer.json of a unigram vocabulary, relative position buckets): 2 decoder layers
    of 2 heads."""
    folder.mkdir(parents=True, exist_ok=True)
    sp = spm.SentencePieceProcessor(model_proto=_sentencepiece())
    vocab = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    tokenizer = transformers.T5Tokenizer(vocab=vocab, extra_ids=0)
    tokenizer.save_pretrained(folder)
    _seed(seed)
    config = transformers.T5Config(
        vocab_size=len(vocab),
        d_model=16,
        d_kv=8,
        d_ff=32,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    transformers.T5ForConditionalGeneration(config).save_pretrained(folder)
    return folder


def bart_folder(folder: Path, seed: int = 0) -> Path:
    """A BART folder with a byte-level BPE trained on the sentences (``Ġ`` starts a word): 2 decoder
    layers of 2 heads."""
    from tokenizers import ByteLevelBPETokenizer

    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    bpe.train_from_iterator(
        SENTENCES * 4, vocab_size=300, min_frequency=2, special_tokens=specials, show_progress=False
    )
    model = json.loads(bpe.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    tokenizer = transformers.BartTokenizer(vocab=model["vocab"], merges=merges)
    tokenizer.save_pretrained(folder)
    _seed(seed)
    config = transformers.BartConfig(vocab_size=len(model["vocab"]), **SIZES, **BART_IDS, forced_bos_token_id=0)
    transformers.BartForConditionalGeneration(config).save_pretrained(folder)
    return folder


def m2m_folder(folder: Path, seed: int = 0) -> Path:
    """An M2M100 folder (vocab.json, sentencepiece.bpe.model, language tokens ``__en__``, en -> fr):
    2 decoder layers of 2 heads."""
    folder.mkdir(parents=True, exist_ok=True)
    model = _sentencepiece()
    (folder / "sentencepiece.bpe.model").write_bytes(model)
    sp = spm.SentencePieceProcessor(model_proto=model)
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(sp.get_piece_size()):
        vocab.setdefault(sp.id_to_piece(i), len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = transformers.M2M100Tokenizer(
        str(folder / "vocab.json"), str(folder / "sentencepiece.bpe.model"), src_lang="en", tgt_lang="fr"
    )
    tokenizer.save_pretrained(folder)
    _seed(seed)
    languages = 120  # the language tokens come after the vocabulary: 100 codes and 8 made-up words
    config = transformers.M2M100Config(vocab_size=len(vocab) + languages, **SIZES, **BART_IDS)
    transformers.M2M100ForConditionalGeneration(config).save_pretrained(folder)
    return folder


def mbart_folder(folder: Path, seed: int = 0) -> Path:
    """An mBART folder (a unigram tokenizer.json, language codes ``en_XX`` after ``</s>``, as mBART-cc25):
    2 decoder layers of 2 heads."""
    folder.mkdir(parents=True, exist_ok=True)
    sp = spm.SentencePieceProcessor(model_proto=_sentencepiece())
    specials = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    vocab = specials + [(sp.id_to_piece(i), sp.get_score(i)) for i in range(3, sp.get_piece_size())]
    tokenizer = transformers.MBartTokenizer(vocab=vocab, src_lang="en_XX", tgt_lang="fr_XX")
    tokenizer.save_pretrained(folder)
    _seed(seed)
    config = transformers.MBartConfig(vocab_size=len(tokenizer) + 10, **SIZES, **BART_IDS)
    transformers.MBartForConditionalGeneration(config).save_pretrained(folder)
    return folder


BUILDERS = {"marian": marian_folder, "t5": t5_folder, "bart": bart_folder, "m2m_100": m2m_folder, "mbart": mbart_folder}
